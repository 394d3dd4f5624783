// Command pitstop serves LLM agents and owns their tool calls; `pitstop bench`
// replays agent workloads on the engine with a simulated or real executor.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// usageError marks bad command-line input: one line on stderr, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "pitstop",
		Short:         "pitstop: an LLM serving runtime that runs agents' tool calls itself",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, add := range subcommands {
		root.AddCommand(add())
	}
	// Flag errors (an unknown flag, "--rates abc") are usage errors too: exit 2.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	for _, c := range root.Commands() {
		c.SetFlagErrorFunc(root.FlagErrorFunc())
	}
	return root
}

// subcommands is filled by each command's file in its init, one file per command.
var subcommands []func() *cobra.Command

func main() { os.Exit(run(os.Args[1:])) }

// run executes the CLI and returns the exit status: 0, 1 for a failure, 2
// for bad input.
func run(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "pitstop:", err)
	var ue usageError
	if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") {
		return 2
	}
	return 1
}
