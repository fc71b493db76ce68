// Package gatehouse holds the few types every module of Gatehouse shares:
// the domain error and its kinds, the verified caller (Principal), ids and
// the clock, the audit entry, the tool switch rule, and the checks on text
// and email addresses that identity and the tools apply alike. It imports
// nothing of ours, so any package may import it without a cycle.
package gatehouse
