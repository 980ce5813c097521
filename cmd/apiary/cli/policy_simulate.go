package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/policy/simulate"
)

// newPolicySimulateCommand is `apiary policy simulate -f scenario.yaml`:
// the verdicts of a scenario's queries, computed offline by the policy
// engine, with no agent and no kvstore (docs/policy.md, "Simulation").
// It exits 0 when the file is valid, whatever the verdicts.
func newPolicySimulateCommand() *cobra.Command {
	var (
		file         string
		explain      bool
		localCluster bool
		output       outputFormat
	)
	cmd := &cobra.Command{
		Use:   "simulate -f <scenario.yaml>",
		Short: "Decide a scenario's connections offline, without an agent",
		Long: "Reads namespaces, endpoints, policies and queries from one file and prints, " +
			"for each query, whether the source's egress and the destination's ingress allow it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			if file == "" {
				return errors.New("--file is required")
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("read scenario: %w", err)
			}
			scenario, err := simulate.ParseScenario(file, data)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed(flagDefaultLocalCluster) {
				scenario.PolicyDefaultLocalCluster = &localCluster
			}
			sim, err := simulate.New(file, scenario)
			if err != nil {
				return err
			}
			for _, w := range sim.Warnings() {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+w)
			}
			results := sim.Run()
			if explain {
				results = sim.RunExplain()
			}
			if output.isJSON() {
				return printJSON(cmd.OutOrStdout(), results)
			}
			return simulate.WriteText(cmd.OutOrStdout(), results)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "Scenario file (YAML)")
	cmd.Flags().BoolVar(&explain, "explain", false, "Say which rule decided each direction")
	cmd.Flags().BoolVar(&localCluster, flagDefaultLocalCluster, true,
		"Peer selectors that name no cluster select the local cluster only, as the agent's flag "+
			"(overrides the scenario's policyDefaultLocalCluster)")
	output.register(cmd.Flags())
	return cmd
}

const flagDefaultLocalCluster = "policy-default-local-cluster"
