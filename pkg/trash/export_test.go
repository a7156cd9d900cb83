package trash

// DirStore and PeekDirStore are the two stores AtDir opens (MoveInto, and
// the others), for the tests of each one alone.
var (
	DirStore     = dirStore
	PeekDirStore = peekDirStore
)
