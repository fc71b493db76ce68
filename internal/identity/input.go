package identity

// tokenInput is the body of the endpoints that take a one-time token
// (magic link, email verification).
type tokenInput struct {
	Token string `json:"token"`
}

// refreshInput is the body of refresh and logout.
type refreshInput struct {
	RefreshToken string `json:"refresh_token"`
}
