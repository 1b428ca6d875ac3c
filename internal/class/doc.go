// Package class runs classrooms: instructors (with argon2id password
// hashes), classes (the labs they run in order, a join code, a capacity, an
// opening and closing time, a time limit per session), the learners who
// join them and the export of their results.
//
// It is the application layer below both front ends: `oplab instructor`
// and `oplab class` call it, and so will the web dashboard. Every call that
// manages a class takes the Actor doing it: an instructor manages only the
// classes they own, an admin every class.
//
// Learners join with the class's code and a display name, and get a
// learner identity and a personal rejoin code, shown once, that lets them
// back in from another device. Join codes are 10 characters of an
// unambiguous alphabet (about 50 bits), and failed attempts are rate
// limited per client address, so a code cannot be guessed in the life of a
// class. An instructor's wrong passwords are counted before they are
// hashed, per address and per name, and the hashes that run at once are
// bounded (each holds 64 MiB), so sign-in cannot be used to take the
// server down.
//
// A sign-in (SignIn) is a record, not just a cookie: a front end's cookie
// names it, and SignedIn reads it on every request, so a sign-out, a
// closed class or a removed instructor takes effect on the next request,
// and whether an instructor is an admin is what the store says now.
//
// The store keeps rejoin codes and passwords only as hashes; a join
// code is kept as is, because the instructor shows it to the room (and
// again on the dashboard) for as long as the class runs. Neither codes nor
// passwords are ever logged.
package class
