package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/orchestrator"
)

// loadjob is the entry point of the orchestrators' one-shot load jobs: Nomad
// passes the step's load flags as dispatch meta (NOMAD_META_args) and its
// Lua script as the dispatch payload; Swarm's replicated job passes both in
// its environment (ORCHBENCH_LOAD_ARGS, ORCHBENCH_LOAD_SCRIPT, base64), since
// a task cannot spread a variable into its argument list itself. A job
// whose files the harness cannot read (a Kubernetes pod on another node)
// adds --result-to-log: the result follows the generator's output in the
// job's log (orchestrator.WriteResultToLog), which the API serves.
func init() {
	var out string
	var toLog bool
	cmd := &cobra.Command{
		Use:    "loadjob",
		Short:  "Run `orchbench load` with the flags in NOMAD_META_args or ORCHBENCH_LOAD_ARGS (inside a load job)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var args []string
			from := "NOMAD_META_args"
			raw := os.Getenv(from)
			if raw == "" {
				from = orchestrator.EnvLoadArgs
				raw = os.Getenv(from)
			}
			if err := json.Unmarshal([]byte(raw), &args); err != nil || len(args) == 0 {
				return fmt.Errorf("%s %q: want a JSON array of `orchbench load` arguments", from, raw)
			}
			if err := orchestrator.UnpackScript(args, os.Getenv(orchestrator.EnvLoadScript)); err != nil {
				return err
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			load := exec.Command(self, append([]string{"load", "-o", out}, args...)...)
			load.Stdout, load.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			err = runForwardingSignals(load)
			if toLog {
				// a failed run's partial result is kept too: the harness
				// archives it beside the failure
				if lerr := orchestrator.WriteResultToLog(cmd.OutOrStdout(), out); lerr != nil && err == nil {
					err = fmt.Errorf("result into the log: %w", lerr)
				}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "/alloc/result.json", "where the JSON result goes")
	cmd.Flags().BoolVar(&toLog, "result-to-log", false, "also write the result into this job's output once the generator ends, for a harness that reads the job's log and not its files")
	rootCmd.AddCommand(cmd)
}

// runForwardingSignals runs the load child and passes SIGINT and SIGTERM
// on to it: the task's stop signal reaches only this process (PID 1 of the
// container), and the child must see it to write its partial result. A
// stopped job fails even if the child finished in the same instant, so a
// kill never passes for a complete run.
func runForwardingSignals(load *exec.Cmd) error {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := load.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- load.Wait() }()
	var got os.Signal
	for {
		select {
		case sig := <-sigs:
			got = sig
			load.Process.Signal(sig)
		case err := <-exited:
			if err != nil {
				return fmt.Errorf("load: %w", err)
			}
			if got != nil {
				return fmt.Errorf("stopped by %v", got)
			}
			return nil
		}
	}
}
