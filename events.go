package gatehouse

// SecurityEvent names one kind of security event: a structured log line
// (event=<name>) with the request's id, client IP and user agent, the
// user when known and the method or reason; never a secret. The kernel
// (internal/web) writes them; modules report theirs through the small
// Events interface they are given. docs/security-logging.md lists every
// event, its fields and where it goes (TestSecurityEventsDocumented).
type SecurityEvent string

// The security events.
const (
	// EventSignIn: a credential was accepted and a session opened
	// (method: password, magic_link, passkey, oauth_code, oauth_device,
	// oauth_refresh; pending when the second factor is still owed).
	EventSignIn SecurityEvent = "auth.signin.success"
	// EventSignInFailure: a credential was refused (method, reason).
	EventSignInFailure SecurityEvent = "auth.signin.failure"
	// EventSecondFactor: the second-factor step succeeded (method).
	EventSecondFactor SecurityEvent = "auth.mfa.success"
	// EventSecondFactorFailure: the second-factor step was refused
	// (method, reason).
	EventSecondFactorFailure SecurityEvent = "auth.mfa.failure"
	// EventLockout: an account's password guesses or second-factor
	// attempts reached their limit (reason: password, second_factor).
	EventLockout SecurityEvent = "auth.lockout"
	// EventRecoveryRequest: a password reset link was asked for.
	EventRecoveryRequest SecurityEvent = "auth.recovery.request"
	// EventRecoveryReset: a password was reset through its link.
	EventRecoveryReset SecurityEvent = "auth.recovery.reset"
	// EventRecoveryRefused: a reset was refused (reason).
	EventRecoveryRefused SecurityEvent = "auth.recovery.refused"
	// EventKeyExchange: an API key was exchanged for an access token.
	EventKeyExchange SecurityEvent = "auth.key_exchange.success"
	// EventKeyExchangeFailure: an API key exchange was refused.
	EventKeyExchangeFailure SecurityEvent = "auth.key_exchange.failure"
	// EventRefused: the kernel answered 401 or 403.
	EventRefused SecurityEvent = "http.refused"
	// EventRateLimited: the kernel answered 429 (limiter when known).
	EventRateLimited SecurityEvent = "http.rate_limited"
)

// SecurityEvents lists every security event.
func SecurityEvents() []SecurityEvent {
	return []SecurityEvent{EventSignIn, EventSignInFailure, EventSecondFactor, EventSecondFactorFailure, EventLockout,
		EventRecoveryRequest, EventRecoveryReset, EventRecoveryRefused, EventKeyExchange, EventKeyExchangeFailure,
		EventRefused, EventRateLimited}
}

// Success reports whether e records an accepted credential or request
// (logged at Info; the others at Warn).
func (e SecurityEvent) Success() bool {
	switch e {
	case EventSignIn, EventSecondFactor, EventRecoveryRequest, EventRecoveryReset, EventKeyExchange:
		return true
	}
	return false
}
