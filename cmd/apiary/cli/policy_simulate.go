package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apiary-net/apiary/cells/safefile"
	"github.com/apiary-net/apiary/policy/policyapi"
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
		limits       = policyapi.DefaultLimits()
		output       outputFormat
		dp           = simulateDatapath(datapathEngine)
	)
	cmd := &cobra.Command{
		Use:   "simulate -f <scenario.yaml>",
		Short: "Decide a scenario's connections offline, without an agent",
		Long: "Reads namespaces, endpoints, policies and queries from one file and prints, " +
			"for each query, whether the source's egress and the destination's ingress allow it. " +
			"With --datapath=bpf the verdicts come from apiary's eBPF programs loaded into the kernel " +
			"(private maps, nothing left pinned) instead of the engine.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := output.check(); err != nil {
				return err
			}
			if file == "" {
				return errors.New("--file is required")
			}
			// Only a regular file: a named pipe or a device would block or
			// never end.
			data, err := safefile.Read(cmd.Context(), file, safefile.Limits{MaxSize: limits.MaxInput()})
			switch {
			case errors.Is(err, safefile.ErrTooLarge):
				return fmt.Errorf("read scenario %s: %w", file, limits.InputTooLarge(-1))
			case err != nil:
				return fmt.Errorf("read scenario: %w", err)
			}
			scenario, err := simulate.ParseScenarioLimits(file, data, limits)
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
			var results []simulate.Result
			switch {
			case dp == datapathBPF:
				if results, err = runSimulateBPF(cmd.Context(), sim, explain, cmd.ErrOrStderr()); err != nil {
					return err
				}
			case explain:
				results = sim.RunExplain()
			default:
				results = sim.Run()
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
	cmd.Flags().Int64Var(&limits.MaxDocumentSize, policyapi.FlagMaxDocumentSize, limits.MaxDocumentSize,
		"Most bytes one policy document may decode to, as JSON with YAML aliases expanded, as the agent's flag")
	cmd.Flags().Int64Var(&limits.MaxInputSize, policyapi.FlagMaxInputSize, limits.MaxInputSize,
		"Most bytes of the scenario file, read and decoded, as the agent's flag")
	cmd.Flags().Var(&dp, "datapath", "What decides the verdicts: engine (the policy engine's map states) or bpf "+
		"(crafted packets through the endpoint programs in the kernel with BPF_PROG_TEST_RUN; needs root)")
	output.register(cmd.Flags())
	return cmd
}

const flagDefaultLocalCluster = "policy-default-local-cluster"
