package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/mediactl/mediactl/pkg/outcome"
	"github.com/mediactl/mediactl/pkg/sessions"
	"github.com/mediactl/mediactl/pkg/store"
	"github.com/mediactl/mediactl/pkg/storelock"
	"github.com/mediactl/mediactl/pkg/usage"
)

// Exit codes, the same for every command. Scripts should treat any code they do
// not know as a failure.
const (
	exitOK          = 0   // success, nothing wrong found
	exitFound       = 1   // the check found problems (dangling references, corrupt blobs)
	exitUsage       = 2   // bad flag, bad URL, missing argument
	exitIncomplete  = 3   // an I/O or parse error stopped part of the work; nothing unsafe was done
	exitRefused     = 4   // a safety guard refused (lock held, delete limit)
	exitInterrupted = 130 // interrupted by Ctrl-C or SIGTERM; what was done is reported
)

const exitCodesHelp = `EXIT CODES:
   0    success, nothing wrong found
   1    the check found problems (dangling references, corrupt blobs)
   2    usage error: a bad flag, URL or path (the message says how to fix it)
   3    incomplete: an I/O or parse error stopped part of the work; nothing unsafe was done
   4    refused by a safety guard (lock held, delete limit)
   130  interrupted (Ctrl-C / SIGTERM); what was done is reported
   Treat any other code as a failure.`

// exitFor is the one table from a report's outcome to the exit code.
func exitFor(o outcome.Outcome) int {
	switch o {
	case outcome.OK:
		return exitOK
	case outcome.Found:
		return exitFound
	case outcome.Refused:
		return exitRefused
	case outcome.Incomplete:
		return exitIncomplete
	case outcome.Interrupted:
		return exitInterrupted
	}
	return exitIncomplete
}

// exitError carries an exit code up to main. A nil err means the report was
// already printed and only the code remains.
type exitError struct {
	code int
	err  error
	hint string
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageErr is a usage error with a hint saying what to do.
func usageErr(hint, format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...), hint: hint}
}

// ended ends the command with its report's outcome, after the report was
// printed.
func ended(o outcome.Outcome) error {
	if o == outcome.OK {
		return nil
	}
	return &exitError{code: exitFor(o)}
}

// exitCodeOf maps an error to the exit code table above.
func exitCodeOf(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, usage.Err):
		return exitUsage
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	}
	return exitIncomplete
}

// libraryHint is the hint, with the flags to use, for an error a library
// returned with its data only.
func libraryHint(err error) string {
	var ce *store.CredentialsError
	var ee *store.EndpointError
	var qe *sessions.QueryError
	var te *store.IOTimeoutError
	var ve *store.VersionRestoreUnsupportedError
	switch {
	case errors.As(err, &ve):
		return versionRestoreHint(ve)
	case errors.As(err, &ce) && ce.Scheme == "gs":
		return "set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, or run 'gcloud auth application-default login' (or use a VM's service account); see docs/stores.md"
	case errors.As(err, &ce) && ce.Scheme == "azblob":
		return "set AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN (or AZURE_STORAGE_CONNECTION_STRING; or the account with 'az login' or a managed identity); see docs/stores.md"
	case errors.As(err, &ce):
		return "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE with ~/.aws/credentials, or an instance role); see docs/stores.md"
	case errors.As(err, &ee):
		return "add use_path_style=true to the bucket URL's query (S3-compatible servers such as MinIO, SeaweedFS and Ceph want path-style addressing); see docs/stores.md"
	case errors.As(err, &te):
		return "the service stopped answering on a connection: run again, and if it is only slow, raise io_timeout= in the bucket URL's query (now " + te.After.String() + "); see docs/stores.md"
	}
	if errors.As(err, &qe) {
		if qe.Rewrite {
			return "drop --sessions-query: rewriting works on the whole source"
		}
		return "drop --sessions-query, or give it with a sqlite:PATH or postgres:// source"
	}
	return ""
}

// lockedLine is what every command says about a store whose lock another run
// holds, written once.
func lockedLine(le *storelock.LockedError) string {
	file := le.File
	if file == "" {
		file = storelock.Name
	}
	if le.Claim != "" {
		return fmt.Sprintf("%v; remove %s and %s, then run again", le, filepath.Join(le.Store, store.InternalDir, file), filepath.Join(le.Store, store.InternalDir, le.Claim))
	}
	return fmt.Sprintf("%v; if that run is gone, remove %s", le, filepath.Join(le.Store, store.InternalDir, file))
}
