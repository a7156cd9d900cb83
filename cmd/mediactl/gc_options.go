package main

// gc's flags turned into options, with the rules between them.

import (
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/gc"
	"github.com/mediactl/mediactl/pkg/retain"
)

// gcOptions reads the policy and guard flags.
func gcOptions(c *cli.Context) (gc.RunOptions, error) {
	var o gc.RunOptions
	o.Command, o.Delete, o.NoTrash = "mediactl gc", c.Bool("delete"), c.Bool("no-trash")
	if o.Delete && c.Bool("dry-run") {
		return o, usageErr("drop --dry-run to remove the planned blobs, or --delete to only plan (gc is dry without --delete)", "--dry-run and --delete contradict each other")
	}
	switch p := gc.Policy(c.String("policy")); p {
	case gc.Refcount, gc.Age:
		o.Policy = p
	default:
		return o, usageErr("use --policy refcount or --policy age", "unknown policy %q", p)
	}
	var err error
	if o.MinAge, err = retain.ParseAge(c.String("min-age")); err != nil || o.MinAge < 0 {
		return o, usageErr("write a duration such as 24h, 36h, 2d or 1w, or 0 for no minimum age", "bad --min-age %q", c.String("min-age"))
	}
	if o.MinAge == 0 {
		// Zero means zero: the operator asked for no fence (all writers
		// stopped). The library's zero value is its default.
		o.MinAge = retain.NoMinAge
	}
	if s := c.String("max-age"); s != "" {
		if o.MaxAge, err = retain.ParseAge(s); err != nil || o.MaxAge <= 0 {
			return o, usageErr("write a duration such as 30d, 2w or 36h", "bad --max-age %q", s)
		}
	}
	if o.Policy == gc.Age && o.MaxAge == 0 {
		return o, usageErr("add --max-age, e.g. --max-age 30d", "the age policy needs --max-age")
	}
	if o.Policy == gc.Refcount && c.IsSet("max-age") {
		return o, usageErr("add --policy age", "--max-age is for the age policy")
	}
	o.KeepReferenced = c.Bool("keep-referenced")
	if o.KeepReferenced && o.Policy != gc.Age {
		return o, usageErr("refcount keeps every referenced blob already; --keep-referenced goes with --policy age", "--keep-referenced without --policy age")
	}
	if s := c.String("max-size"); s != "" {
		n, err := humanize.ParseBytes(s)
		if err != nil || n == 0 {
			return o, usageErr("write a size such as 50GiB or 10GB", "bad --max-size %q", s)
		}
		if o.Policy != gc.Refcount {
			return o, usageErr("use --max-size with the refcount policy", "--max-size with --policy %s", o.Policy)
		}
		o.MaxSize = int64(n)
	}
	if o.Shard, err = shardOf(c); err != nil {
		return o, err
	}
	if o.Split, err = splitOf(c, o.Shard); err != nil {
		return o, err
	}
	if o.Shard.Sharded() && o.MaxSize > 0 {
		return o, usageErr("run the size cap on the whole store (without --shard): it decides over all the blobs at once", "--max-size with --shard %s", o.Shard)
	}
	if o.NoTrash && !o.Delete {
		return o, usageErr("add --delete, or drop --no-trash", "--no-trash only makes sense with --delete")
	}
	md := strings.TrimSpace(c.String("max-delete"))
	if pct, ok := strings.CutSuffix(md, "%"); ok {
		v, err := strconv.ParseFloat(pct, 64)
		if err != nil || !(v > 0 && v <= 100) { // NaN too
			return o, usageErr("write a count such as 1000 or a percentage such as 50%", "bad --max-delete %q", md)
		}
		o.Guards.MaxDeletePercent = v
	} else {
		v, err := strconv.ParseInt(md, 10, 64)
		if err != nil || v <= 0 {
			return o, usageErr("write a count such as 1000 or a percentage such as 50%", "bad --max-delete %q", md)
		}
		if o.Shard.Sharded() {
			return o, usageErr("give it as a percentage (each shard applies it to its own part), or run without --shard",
				"--max-delete %s with --shard %s: each shard would remove up to %d blobs, %d in all", md, o.Shard, v, v*int64(o.Shard.N))
		}
		o.Guards.MaxDeleteCount = v
	}
	o.Guards.AllowNoReferences = c.Bool("allow-no-references")
	o.Jobs = c.Int("jobs")
	if o.Grace, err = retain.ParseAge(c.String("grace")); err != nil || o.Grace <= 0 {
		return o, usageErr("write a duration such as 24h or 2d", "bad --grace %q", c.String("grace"))
	}
	o.CopyToTrash = c.Bool("copy-to-trash")
	if o.CopyToTrash && o.NoTrash {
		return o, usageErr("drop one of them", "--copy-to-trash and --no-trash contradict each other")
	}
	// The library's own rules, for what the flags above do not word.
	if err := o.Validate(); err != nil {
		return o, usageErr("see 'mediactl gc --help'", "%v", err)
	}
	return o, nil
}
