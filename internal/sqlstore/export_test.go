package sqlstore

// BackfillEmailKeys is backfillEmailKeys, for the tests of migration 00100.
var BackfillEmailKeys = backfillEmailKeys
