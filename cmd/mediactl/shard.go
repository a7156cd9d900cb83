package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mediactl/mediactl/pkg/shard"
)

// shardFlag is --shard, the same on scan, verify, gc, migrate and report.
func shardFlag() cli.Flag {
	return &cli.StringFlag{
		Name: "shard",
		Usage: "work on shard K of N only, K counting from 0 (3/16), or auto/N to take K from " + shard.IndexEnv +
			" (set in each pod of a Kubernetes Indexed Job); the N shards together cover the store once",
		EnvVars: envVar("shard"),
	}
}

// shardOf reads --shard.
func shardOf(c *cli.Context) (shard.Spec, error) {
	s, err := shard.Parse(c.String("shard"), os.Getenv)
	var se *shard.SyntaxError
	switch {
	case errors.Is(err, shard.ErrNoIndex):
		return s, usageErr("auto/N is for the pods of an Indexed Job, where Kubernetes sets "+shard.IndexEnv+"; elsewhere give K/N, such as --shard 0/4", "--shard %s: %v", c.String("shard"), err)
	case errors.As(err, &se):
		return s, usageErr(se.Reason, "bad --shard %q", se.Text)
	case err != nil:
		return s, usageErr("", "--shard: %v", err)
	}
	return s, nil
}

// shardNote is " (shard K/N)" for a sharded run's summary line.
func shardNote(s string) string {
	if s == "" {
		return ""
	}
	return " (shard " + s + ")"
}

// splitOf reads --split: the name of the split a shard's gc is part of. In
// a pod of a Kubernetes Indexed Job it defaults to the Job's name, which the
// pod's host name carries ("<job>-<index>").
func splitOf(c *cli.Context, s shard.Spec) (string, error) {
	split := c.String("split")
	switch {
	case split != "" && !s.Sharded():
		return "", usageErr("--split names the split a shard is part of: add --shard K/N, or drop --split", "--split without --shard")
	case split != "" && !shard.ValidSplit(split):
		return "", usageErr("write 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or a digit, such as nightly-20261206", "bad --split %q", split)
	case split == "" && s.Sharded():
		host, _ := os.Hostname()
		split = shard.JobOf(host, os.Getenv(shard.IndexEnv))
	}
	return split, nil
}
