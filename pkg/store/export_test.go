package store

// WalkOnly makes s resolve folders as where openat2 is refused: one
// O_NOFOLLOW|O_DIRECTORY openat per folder (a no-op off Linux).
func WalkOnly(s *LocalStore) { s.noOpenat2.Store(true) }
