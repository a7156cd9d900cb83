package migrate

import (
	"fmt"

	"github.com/mediactl/mediactl/pkg/usage"
)

// OptionError is an option, or a pair of options, that cannot be used: a
// usage error, which Validate returns and Run refuses before it starts.
type OptionError struct {
	Option string
	Reason string
}

func (e *OptionError) Error() string { return fmt.Sprintf("migrate: %s: %s", e.Option, e.Reason) }

// Is makes an OptionError a usage error.
func (e *OptionError) Is(target error) bool { return target == usage.Err }

// Validate checks the options on their own, before anything is opened or
// copied: the stores, the steps and what each needs, the selection.
func (o RunOptions) Validate() error {
	switch {
	case o.From == nil:
		return &OptionError{"From", "no source store"}
	case o.To == nil:
		return &OptionError{"To", "no destination"}
	case (o.Rewrite || o.DeleteSource) && len(o.Sessions) == 0:
		return &OptionError{"Sessions", "rewriting and deleting sources need the sessions"}
	case (o.Rewrite || o.DeleteSource) && o.Select.Shard.Sharded():
		return ErrShardedSessionStep
	case o.Rewrite && !o.DryRun && len(o.Rewriters) == 0:
		return &OptionError{"Rewriters", "a rewrite needs the sessions opened for writing"}
	case o.TrashDir != "" && !o.DeleteSource:
		return &OptionError{"TrashDir", "a trash folder is for DeleteSource"}
	case o.MinIdle < 0 || o.MinAge < 0 || o.Select.MinAge < 0:
		return &OptionError{"MinIdle, MinAge", "a negative duration"}
	case o.Jobs < 0 || o.BandwidthLimit < 0 || o.PartSize < 0 || o.PartConcurrency < 0:
		return &OptionError{"Jobs, BandwidthLimit, PartSize, PartConcurrency", "a negative value"}
	}
	if err := o.Select.Check(); err != nil {
		return err
	}
	return nil
}
