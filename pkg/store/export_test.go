package store

// WalkOnly makes s resolve folders as where openat2 is refused: one
// O_NOFOLLOW|O_DIRECTORY openat per folder (a no-op off Linux).
func WalkOnly(s *LocalStore) { s.noOpenat2.Store(true) }

// FileWalkOnly makes the reads of the file:// bucket s take the portable
// path of its confined open, as where openat2 is refused.
func FileWalkOnly(s *BucketStore) error {
	d, err := s.prefixFolder()
	if err != nil {
		return err
	}
	d.noOpenat2.Store(true)
	return nil
}

// CheckBucketURL reports what Open would refuse in a bucket URL (its
// syntax, scheme, query parameters, prefix) without opening it: no request,
// no credentials.
func CheckBucketURL(rawURL string) error {
	_, err := parseBucketURL(rawURL)
	return err
}

// FileblobKeepsName reports whether a file:// bucket keeps an object's name
// as its file's name (see fileblobKeepsName).
var FileblobKeepsName = fileblobKeepsName

// IsThrottled reports whether err is a service asking the client to slow
// down (see isThrottled).
var IsThrottled = isThrottled
