package tasks

import (
	"encoding/json"

	"github.com/gatehouse/gatehouse"
)

// Input is the body of an issue create or update; nil fields are absent.
// JSON null clears the nullable ones (Clear lists them).
type Input struct {
	TeamID      *string
	Title       *string
	Description *string
	ParentID    *string
	StateID     *string
	AssigneeID  *string
	Priority    *int
	Estimate    *int
	DueDate     *string
	Labels      *[]string
	Clear       map[string]bool // fields sent as null
}

// DecodeInput reads an issue body, typing each field strictly.
func DecodeInput(raw map[string]json.RawMessage) (*Input, error) {
	in := &Input{Clear: map[string]bool{}}
	for name, dst := range map[string]**string{"teamId": &in.TeamID, "title": &in.Title, "description": &in.Description,
		"parentId": &in.ParentID, "stateId": &in.StateID, "assigneeId": &in.AssigneeID, "dueDate": &in.DueDate} {
		if err := field(raw, in, name, "a string", dst); err != nil {
			return nil, err
		}
	}
	for name, dst := range map[string]**int{"priority": &in.Priority, "estimate": &in.Estimate} {
		if err := field(raw, in, name, "an integer", dst); err != nil {
			return nil, err
		}
	}
	if v, ok := raw["labels"]; ok {
		if string(v) == "null" {
			in.Clear["labels"] = true
		} else {
			labels, err := decodeLabels(v)
			if err != nil {
				return nil, err
			}
			in.Labels = &labels
		}
	}
	return in, nil
}

// field decodes raw[name] into *dst when present; null marks it cleared.
func field[T any](raw map[string]json.RawMessage, in *Input, name, kind string, dst **T) error {
	v, ok := raw[name]
	if !ok {
		return nil
	}
	if string(v) == "null" {
		in.Clear[name] = true
		return nil
	}
	var x T
	if err := json.Unmarshal(v, &x); err != nil {
		return gatehouse.Invalid("%s must be %s", name, kind)
	}
	*dst = &x
	return nil
}

// decodeLabels accepts label names, or objects with a name.
func decodeLabels(v json.RawMessage) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, gatehouse.Invalid("labels must be an array of label names")
	}
	names := make([]string, 0, len(items))
	for _, it := range items {
		var name string
		if err := json.Unmarshal(it, &name); err != nil {
			var obj struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(it, &obj); err != nil || obj.Name == "" {
				return nil, gatehouse.Invalid("labels must be an array of label names")
			}
			name = obj.Name
		}
		names = append(names, name)
	}
	return names, nil
}

// set reports whether in carries a value for field.
func (in *Input) set(field string) bool {
	switch field {
	case "title":
		return in.Title != nil
	case "description":
		return in.Description != nil
	case "parentId":
		return in.ParentID != nil
	case "stateId":
		return in.StateID != nil
	case "assigneeId":
		return in.AssigneeID != nil
	case "priority":
		return in.Priority != nil
	case "estimate":
		return in.Estimate != nil
	case "dueDate":
		return in.DueDate != nil
	case "labels":
		return in.Labels != nil
	}
	return false
}
