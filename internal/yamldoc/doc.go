// Package yamldoc decodes oplab's YAML data files (labs, quizzes, lesson
// front matter) strictly: an unknown field, a value of the wrong type or a
// duplicate key is an error that names the file, the line and the field.
//
// Decoding goes through a yaml.Node tree so that later validation can also
// point at the line of the field it complains about (see Doc.Errorf).
package yamldoc
