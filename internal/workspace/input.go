package workspace

// teamInput is the body that creates or changes a team: the fields
// present.
type teamInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

// domainInput is the body that claims a domain or changes its mode.
type domainInput struct {
	Domain string `json:"domain"`
	Mode   string `json:"mode"`
}
