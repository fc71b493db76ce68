package identity

// RecoveryHash exports recoveryHash to the tests of the store rule.
var RecoveryHash = recoveryHash
