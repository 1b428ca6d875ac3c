// Package lab defines oplab's lab files (labs/<id>/lab.yaml): the lab, its
// exercises, and the typed actions (setup, chaos, solutions) and checks
// (steady state, fault confirmation, goals) they are made of.
//
// Action and check kinds live in registries (ActionKinds, CheckKinds); each
// kind has a typed parameter struct, so a decoded Step carries a value such
// as *DeletePrimaryPod that the engine which runs labs switches on. Decoding
// is strict and validation resolves every reference: lesson pages in every
// language, the quiz, kinds, parameters and regular expressions.
package lab
