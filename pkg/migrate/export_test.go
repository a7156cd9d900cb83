package migrate

// Append and AppendSync let the external tests write any record, also the
// malformed ones a damaged journal holds.
func (j *Journal) Append(rec Record) error     { return j.append(rec) }
func (j *Journal) AppendSync(rec Record) error { return j.appendSync(rec) }

// The steps Run sequences, for the tests that drive one step alone.
var (
	Copy             = copyBlobs
	OpenJournal      = openJournal
	ObjectURL        = objectURL
	Check            = checkStillLocal
	Deletable        = deletable
	SelectedBytes    = selectedBytes
	ReadJournal      = readJournal
	Rewrite          = rewriteSessions
	RollbackSessions = rollbackSessions
	ShardJournal     = shardJournal
	DefaultJournal   = defaultJournal
)

// The edits of one unit, for the tests that apply and undo them alone.
var (
	Apply             = applyEdits
	Revert            = revertRewrite
	ErrRevertConflict = errRevertConflict
)
