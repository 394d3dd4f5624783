// Command pitstop serves LLM agents and owns their tool calls; `pitstop bench`
// replays agent workloads on the engine with a simulated or real executor.
package main

import (
	"errors"
	"fmt"
	"os"

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
	return root
}

// subcommands is filled by each command's file in its init, one file per command.
var subcommands []func() *cobra.Command

func main() {
	err := newRootCmd().Execute()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "pitstop:", err)
	var ue usageError
	if errors.As(err, &ue) {
		os.Exit(2)
	}
	os.Exit(1)
}
