package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// requireKnownSubcommands makes every command below root that only
// groups others (apiary bpf, apiary policy, ...) refuse an argument that
// names none of its subcommands. Cobra prints such a group's help and
// exits 0 for "apiary policy gett", so a script calling a misspelt
// command would pass silently. With no argument the group still prints
// its help.
func requireKnownSubcommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		requireKnownSubcommands(c)
		if !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
			continue
		}
		c.Args = cobra.ArbitraryArgs
		c.SuggestionsMinimumDistance = 2
		c.RunE = unknownSubcommand
	}
}

// unknownSubcommand is the RunE of a group: its help without arguments,
// else an error naming the argument and cobra's suggestions.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(quoteAll(s), " or "))
	}
	return fmt.Errorf("%s; run '%s --help' for its commands", msg, cmd.CommandPath())
}

func quoteAll(s []string) []string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return q
}
