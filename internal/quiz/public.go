package quiz

import "oplab.dev/oplab/internal/locale"

// Public is what a client may see of a quiz before it submits: no correct
// flags, no answer queries, no explanations.
type Public struct {
	ID        string           `json:"id"`
	Title     locale.Text      `json:"title"`
	Questions []PublicQuestion `json:"questions"`
}

// PublicQuestion is a question without its answer.
type PublicQuestion struct {
	ID      string         `json:"id"`
	Type    string         `json:"type"`
	Prompt  locale.Text    `json:"prompt"`
	Choices []PublicChoice `json:"choices,omitempty"`
}

// PublicChoice is a choice without its correct flag.
type PublicChoice struct {
	ID   string      `json:"id"`
	Text locale.Text `json:"text"`
}

// Public returns the view of q that is safe to send before submission.
func (q *Quiz) Public() Public {
	p := Public{ID: q.ID, Title: q.Title, Questions: make([]PublicQuestion, 0, len(q.Questions))}
	for _, qq := range q.Questions {
		pq := PublicQuestion{ID: qq.ID, Type: qq.Type, Prompt: qq.Prompt}
		for _, c := range qq.Choices {
			pq.Choices = append(pq.Choices, PublicChoice{ID: c.ID, Text: c.Text})
		}
		p.Questions = append(p.Questions, pq)
	}
	return p
}
