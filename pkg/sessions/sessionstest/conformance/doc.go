// Package conformance is the conformance suite every session source and
// rewriter passes unchanged, in the spirit of package storetest for stores:
// a folder of JSON files, JSON Lines, SQLite (TEXT and JSONB), PostgreSQL
// (text and jsonb) and a bucket of session objects (file:// and S3). A test
// next to each source makes a Fixture (the source, where each planted
// [Unit] is, and out-of-band access to it as the runtime or the database
// would read and write it) and calls [Run]; the cases are listed there.
//
// It is a package of its own, beside package sessionstest, because package
// sessions' own tests import sessionstest (to find the PostgreSQL server)
// and this suite imports package sessions.
package conformance
