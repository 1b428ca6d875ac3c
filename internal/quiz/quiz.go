package quiz

import "oplab.dev/oplab/internal/locale"

// APIVersion and Kind identify a quiz file.
const (
	APIVersion = "oplab.dev/v1alpha1"
	Kind       = "Quiz"
)

// Question types.
const (
	Single   = "single"   // exactly one choice is correct
	Multiple = "multiple" // one or more choices are correct; all must be picked
	Cluster  = "cluster"  // the answer is read from the learner's cluster
)

// Quiz is one quiz file.
type Quiz struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	ID         string      `yaml:"id"`
	Title      locale.Text `yaml:"title"`
	Lab        string      `yaml:"lab,omitempty"` // the lab this quiz belongs to; empty for course-wide quizzes
	// Attempts is how many submissions a learner has graded (see
	// Standing); DefaultAttempts when omitted.
	Attempts  *int       `yaml:"attempts,omitempty"`
	Questions []Question `yaml:"questions"`
}

// Question is one question with its answer and explanation.
type Question struct {
	ID          string      `yaml:"id"`
	Type        string      `yaml:"type"`
	Prompt      locale.Text `yaml:"prompt"`
	Choices     []Choice    `yaml:"choices,omitempty"`
	Answer      *Query      `yaml:"answer,omitempty"` // cluster questions only
	Explanation locale.Text `yaml:"explanation"`
}

// Choice is one option of a single or multiple choice question.
type Choice struct {
	ID      string      `yaml:"id"`
	Text    locale.Text `yaml:"text"`
	Correct bool        `yaml:"correct,omitempty"`
}

// Question returns the question with the given id.
func (q *Quiz) Question(id string) (*Question, bool) {
	for i := range q.Questions {
		if q.Questions[i].ID == id {
			return &q.Questions[i], true
		}
	}
	return nil, false
}

func (q *Question) correctChoices() map[string]bool {
	out := map[string]bool{}
	for _, c := range q.Choices {
		if c.Correct {
			out[c.ID] = true
		}
	}
	return out
}
