package main

// Flags after positional arguments ("mediactl gc restore RUN --store X"), as
// rclone and restic take them: urfave/cli stops reading flags at the first
// argument, so the command line is put in order before it is parsed.

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst returns args with the flags that follow a command's positional
// arguments moved before them, each with its value, so that the command
// sees them as flags. Everything after "--" stays as it is, and so does a
// command line whose command path is not known (the parser then reports
// it). args[0] is the program name.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return args // completion reads the words before its flag as they are
	}
	out := []string{args[0]}
	flags := app.Flags
	cmds := app.Commands
	i := 1
	found := false
	// The command path: flags before each name are kept where they are.
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return args
		}
		if isFlag(a) {
			n := flagWidth(flags, args[i:])
			out = append(out, args[i:i+n]...)
			i += n
			continue
		}
		cmd := findCommand(cmds, a)
		if cmd == nil {
			break
		}
		out = append(out, a)
		flags, cmds = cmd.Flags, cmd.Subcommands
		found = true
		i++
	}
	if !found {
		return args // no known command: its parser reports the word
	}
	var moved, positional []string
	for i < len(args) {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i:]...)
			i = len(args)
		case isFlag(a):
			n := flagWidth(flags, args[i:])
			moved = append(moved, args[i:i+n]...)
			i += n
		default:
			positional = append(positional, a)
			i++
		}
	}
	return append(append(out, moved...), positional...)
}

// isFlag reports whether a looks like a flag: "-x", "--name", "--name=v"
// ("-" alone is an argument, standing for stdin).
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

// flagWidth is how many words the flag at args[0] takes: 2 for a flag that
// takes a value given as the next word, else 1 (a switch, "--name=value", or
// a flag the command does not know, which the parser then reports).
func flagWidth(flags []cli.Flag, args []string) int {
	name := strings.TrimLeft(args[0], "-")
	if strings.Contains(name, "=") || len(args) < 2 {
		return 1
	}
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			if _, isBool := f.(*cli.BoolFlag); isBool {
				return 1
			}
			if df, ok := f.(cli.DocGenerationFlag); ok && !df.TakesValue() {
				return 1
			}
			return 2
		}
	}
	return 1
}

// findCommand is the command of cmds called name, or nil.
func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
