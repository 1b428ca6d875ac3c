// Package server is oplab's web server: the learner's pages rendered on the
// server from the embedded templates, a JSON API under /api and live
// streams over WebSockets, all behind a signed session cookie. It declares
// the interfaces it needs of the application layer and holds no policy of
// its own.
//
// The server is a front end, a peer of the CLI: a handler parses the
// request, checks who may make it, calls one method of the application
// layer and renders what comes back. Which session an action means, how
// an answer is graded, whether a class is full: each is decided below it,
// once for both front ends. It does not import the application layer or
// anything under it (imports_test.go allows the standard library, gin,
// gorilla/websocket, golang.org/x/text and the leaf packages named below,
// nothing else). Instead it declares, by who calls them, the small
// interfaces it needs (app.go, classroom.go, signin.go): Learning (Labs,
// SessionViews, Exercises, Quizzes, Joining) for a learner's pages,
// Classroom for an instructor's, SignIns for the sign-in forms and every
// signed-in request, Operations for /readyz, and the optional Console and
// Streams. Errors cross as ErrNotFound, ErrConflict and ErrInvalid (and a
// *Refusal with a reason the page says in the learner's language), so a
// status is chosen without knowing the layer's errors.
//
// New takes a Config and returns the Server, an http.Handler;
// ListenAndServe serves it until its context ends. What the server does
// decide is the web's own business: the cookie and its key, CSRF, the
// Host and Origin checks, body limits, and how a WebSocket is written.
//
// A reading order:
//
//   - server.go: Config, New and the routes, ListenAndServe
//   - app.go: the interfaces a learner's pages need, and their views
//   - guard.go: security headers, the Host check, CSRF, the body limit,
//     and authenticate, which reads the sign-in on every request
//   - cookie.go: the signed cookie and its key (loadKey, or Config.Key
//     shared by replicas)
//   - signin.go, join.go, instructor.go: the sign-in link, joining and
//     rejoining a class, an instructor's sign-in
//   - pages.go, render.go, i18n.go: the HTML pages, errors as statuses
//     and messages, the catalogue of texts in each language
//   - api.go: the JSON API of a session, ownership (requireOwned) and the
//     timeline's WebSocket (apiEvents, fed by broker.go)
//   - console.go: the web console, the YAML editor, and the live streams
//     (apiStream)
//   - ws.go: the one WebSocket writer every stream goes through: one
//     writer goroutine, deadlines, ping and pong, same origin
//   - classroom.go, classroom_api.go, classform.go, debrief.go: the
//     instructor's dashboard, board, class forms and a session's replay
//
// Tests are in-process, with httptest, against the application layer in
// memory: one fake per interface, each with its own state (fakeLearning,
// fakeClassroom, fakeSignIns, fakeConsole, fakeStreams), composed as the
// real layer's parts share a store by fakeApp (fake_test.go). They hold
// ownership and CSRF on every route (TestOwnership, TestCSRF), the
// WebSocket's origin and writer (ws_test.go), every text in both languages
// (i18n_test.go), the JSON convention (json_test.go). The browser_*_test.go
// files drive the pages in headless Chromium (internal/browsertest) over
// the same fakes, or scriptedLearning, a lab played in memory; they skip
// under -short.
//
// Of oplab's packages the server imports internal/board, internal/frame,
// internal/quiz (views that cross to the browser as they are),
// internal/jsonconv and internal/metrics, and depends on no other but
// quiz's locale and yamldoc. internal/app/webapp implements its interfaces
// on the App and starts it with New; beyond it only a test imports the
// server (internal/class's sign-in flood, which drives the real form).
package server
