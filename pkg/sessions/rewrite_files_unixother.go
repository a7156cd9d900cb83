//go:build unix && !linux

package sessions

// exchange is Linux's renameat2(RENAME_EXCHANGE); elsewhere the rewriter
// compares and renames.
func exchange(dirfd int, a, b string) error { return errNoExchange }
