package gc

import (
	"fmt"

	"github.com/mediactl/mediactl/pkg/retain"
	"github.com/mediactl/mediactl/pkg/usage"
)

// OptionError is an option, or a pair of options, that cannot be used: a
// usage error, which Validate returns and Run refuses before it starts.
type OptionError struct {
	// Option names the field (or fields) at fault, as the Options spell them.
	Option string
	Reason string
}

func (e *OptionError) Error() string { return fmt.Sprintf("gc: %s: %s", e.Option, e.Reason) }

// Is makes an OptionError a usage error.
func (e *OptionError) Is(target error) bool { return target == usage.Err }

// Validate checks the options on their own, before any store is read: a
// policy and the settings it takes, a size cap that cannot be planned for
// one shard, switches that contradict each other.
func (o Options) Validate() error {
	switch o.Policy {
	case "", Refcount, Age:
	default:
		return &OptionError{"Policy", fmt.Sprintf("unknown policy %q", o.Policy)}
	}
	switch {
	case o.Policy == Age && o.MaxAge <= 0:
		return &OptionError{"MaxAge", "the age policy needs a maximum age"}
	case o.Policy != Age && o.MaxAge != 0:
		return &OptionError{"MaxAge", "a maximum age is for the age policy"}
	case o.Policy != Age && o.KeepReferenced:
		return &OptionError{"KeepReferenced", "refcount keeps every referenced blob already; it goes with the age policy"}
	case o.MaxSize < 0:
		return &OptionError{"MaxSize", "a negative size cap"}
	case o.MaxSize > 0 && o.Policy == Age:
		return &OptionError{"MaxSize", "a size cap goes with the refcount policy"}
	case o.MaxSize > 0 && o.Shard.Sharded():
		return &OptionError{"MaxSize and Shard", ErrShardedCap.Error()}
	case o.MinAge < 0 && o.MinAge != retain.NoMinAge:
		return &OptionError{"MinAge", "a negative minimum age"}
	}
	return nil
}

// Validate checks the run's options: the plan's (Options.Validate), the
// guards, and the switches of the sweep.
func (o RunOptions) Validate() error {
	if err := o.Options.Validate(); err != nil {
		return err
	}
	switch {
	case o.NoTrash && !o.Delete:
		return &OptionError{"NoTrash", "only a run that deletes (Delete) can skip the trash"}
	case o.NoTrash && o.CopyToTrash:
		return &OptionError{"NoTrash and CopyToTrash", "they contradict each other"}
	case o.Guards.MaxDeleteCount < 0 || o.Guards.MaxDeletePercent < 0 || o.Guards.MaxDeletePercent > 100:
		return &OptionError{"Guards", "a delete limit is a count of 0 or more, or a percentage from 0 to 100"}
	case o.Guards.MaxDeleteCount > 0 && o.Shard.Sharded():
		return &OptionError{"Guards.MaxDeleteCount and Shard", "a count applies to the whole store; give each shard a percentage"}
	case o.Grace < 0:
		return &OptionError{"Grace", "a negative grace"}
	}
	return nil
}
