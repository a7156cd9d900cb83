//go:build unix && !linux

package sessions

// exchange is Linux's renameat2(RENAME_EXCHANGE); elsewhere the rewriter
// compares and renames.
func exchange(dirfd int, a, b string) error { return errNoExchange }

// openElsewhere is Linux's lease probe; elsewhere the rewriter cannot tell
// whether another process holds a session file open.
func openElsewhere(dirfd int, name string) bool { return false }
