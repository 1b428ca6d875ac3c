// Package lesson renders the course's markdown pages (content/<lang>/<id>.md)
// to HTML with goldmark: GFM tables, highlighted code, front matter (title,
// order, lab), links between pages, and ```kubectl blocks whose every line
// becomes a command a learner can send to the web console with one click.
//
// Raw HTML in markdown is not rendered and dangerous link schemes are
// dropped, so a page cannot inject script into the lesson view.
package lesson
