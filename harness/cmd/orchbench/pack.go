package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/pack"
)

// packFlags are shared by every pack subcommand: they all render first.
type packFlags struct {
	vars     []string
	varFiles []string
}

func (f *packFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.vars, "var", nil, "set a pack variable, `name=value` or packname.name=value (repeatable)")
	cmd.Flags().StringArrayVarP(&f.varFiles, "var-file", "f", nil, "read variables from an HCL `file` of name = value lines (repeatable)")
}

// render finds, loads and renders the pack named by the command argument.
// A pack that declares mhz_per_core gets the node's fingerprinted value when
// the user did not set one: CPU limits are only right with the real figure.
func (f *packFlags) render(name string, errOut io.Writer) (*pack.Rendered, error) {
	overrides := map[string]string{}
	for _, kv := range f.vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--var %q: expected name=value", kv)
		}
		overrides[strings.TrimSpace(k)] = v
	}
	dir, err := pack.Find(name)
	if err != nil {
		return nil, err
	}
	p, err := pack.Load(dir)
	if err != nil {
		return nil, err
	}
	if _, declared := p.Variables[mhzVariable]; declared && !f.sets(mhzVariable) {
		if mhz, err := nodeMHzPerCore(); err == nil {
			overrides[mhzVariable] = strconv.FormatFloat(mhz, 'f', -1, 64)
		} else {
			fmt.Fprintf(errOut, "note: %s left at the pack default (%v)\n", mhzVariable, err)
		}
	}
	return p.Render(overrides, f.varFiles)
}

const mhzVariable = "mhz_per_core"

// sets reports whether --var or a var file gives the variable a value.
func (f *packFlags) sets(name string) bool {
	for _, kv := range f.vars {
		k, _, _ := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if k == name || strings.HasSuffix(k, "."+name) {
			return true
		}
	}
	for _, file := range f.varFiles {
		if b, err := os.ReadFile(file); err == nil && strings.Contains(string(b), name) {
			return true
		}
	}
	return false
}

// nodeMHzPerCore asks the cluster for the node's MHz per core.
func nodeMHzPerCore() (float64, error) {
	a, err := nomad.New("", "")
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	mhz, _, err := a.NodeCPU(ctx)
	return mhz, err
}

// renderJobs renders and has Nomad parse the jobs, for the commands that
// talk to a cluster.
func (f *packFlags) renderJobs(name string, errOut io.Writer) (*pack.Nomad, []*api.Job, error) {
	r, err := f.render(name, errOut)
	if err != nil {
		return nil, nil, err
	}
	n, err := pack.NewNomad()
	if err != nil {
		return nil, nil, err
	}
	jobs, err := n.ParseJobs(r)
	if err != nil {
		return nil, nil, err
	}
	return n, jobs, nil
}

// forEachJob renders the pack named in args and calls do on each of its jobs.
func (f *packFlags) forEachJob(cmd *cobra.Command, args []string, do func(n *pack.Nomad, job *api.Job) error) error {
	n, jobs, err := f.renderJobs(args[0], cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	for _, job := range jobs {
		if err := do(n, job); err != nil {
			return err
		}
	}
	return nil
}

func newPackCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pack",
		Short: "Render and deploy nomad-pack format packs from ./packs",
		Long: `Render and deploy packs written in nomad-pack's format.

PACK is a name under packs/ (searched from the working directory upwards)
or a path to a pack directory. The same packs work with nomad-pack itself:
  nomad-pack run packs/taewa --var variant=vertical
  orchbench pack run taewa --var variant=vertical

Commands other than render need a Nomad agent (NOMAD_ADDR, default
http://127.0.0.1:4646).`,
	}
	cmd.AddCommand(newPackRenderCmd(), newPackPlanCmd(), newPackRunCmd(), newPackStatusCmd(), newPackDestroyCmd())
	return cmd
}

func newPackRenderCmd() *cobra.Command {
	var flags packFlags
	var outDir string
	cmd := &cobra.Command{
		Use:   "render PACK",
		Short: "Print the rendered templates (no Nomad needed)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := flags.render(args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if outDir != "" {
				return writeRendered(cmd.OutOrStdout(), r, outDir)
			}
			printRendered(cmd.OutOrStdout(), r)
			return nil
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVarP(&outDir, "out", "o", "", "write each rendered file into `dir` instead of printing")
	return cmd
}

// printRendered separates files with an HCL comment naming the source
// template, so a single rendered job can be piped straight into `nomad job
// run -`.
func printRendered(w io.Writer, r *pack.Rendered) {
	first := true
	for _, name := range sortedNames(r.Files) {
		if !first {
			fmt.Fprintln(w)
		}
		first = false
		fmt.Fprintf(w, "# %s\n%s", r.TemplatePath(name), r.Files[name])
		if !strings.HasSuffix(r.Files[name], "\n") {
			fmt.Fprintln(w)
		}
	}
}

func writeRendered(w io.Writer, r *pack.Rendered, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range sortedNames(r.Files) {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(r.Files[name]), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(w, path)
	}
	return nil
}

func newPackPlanCmd() *cobra.Command {
	var flags packFlags
	cmd := &cobra.Command{
		Use:   "plan PACK",
		Short: "Show what running the pack would change in Nomad",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return flags.forEachJob(cmd, args, func(n *pack.Nomad, job *api.Job) error {
				plan, err := n.Plan(job)
				if err == nil {
					pack.WritePlan(cmd.OutOrStdout(), job, plan)
				}
				return err
			})
		},
	}
	flags.register(cmd)
	return cmd
}

func newPackRunCmd() *cobra.Command {
	var flags packFlags
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "run PACK",
		Short: "Deploy the pack's jobs (reusing an identical running version); with --wait, until healthy in Consul",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, jobs, err := flags.renderJobs(args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			adapter, err := nomad.New("", "")
			if err != nil {
				return err
			}
			adapter.Progress = out
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var deployed []*orchestrator.Deployment
			for _, job := range jobs {
				d, err := adapter.Deploy(ctx, job)
				if err != nil {
					return err
				}
				verb := "registered"
				if !d.Fresh {
					verb = "unchanged, already running"
				}
				fmt.Fprintf(out, "job %s version %d %s\n", d.Job, d.Version, verb)
				deployed = append(deployed, d)
			}
			if !wait {
				return nil
			}
			for _, d := range deployed {
				if err := adapter.WaitHealthy(ctx, d, timeout); err != nil {
					return err
				}
				fmt.Fprintf(out, "job %s healthy in %s\n", d.Job, d.DeployDuration.Round(100*time.Millisecond))
			}
			return nil
		},
	}
	flags.register(cmd)
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until every allocation is running and healthy")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Minute, "how long --wait waits")
	return cmd
}

func newPackStatusCmd() *cobra.Command {
	var flags packFlags
	cmd := &cobra.Command{
		Use:   "status PACK",
		Short: "Show the status and allocations of the pack's jobs",
		Long:  "Show the status and allocations of the pack's jobs. Pass the same --var values as for run: they decide the job name.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return flags.forEachJob(cmd, args, func(n *pack.Nomad, job *api.Job) error {
				j, allocs, err := n.Status(*job.ID)
				switch {
				case pack.IsNotFound(err):
					fmt.Fprintf(cmd.OutOrStdout(), "job %q: not running\n", *job.ID)
					return nil
				case err != nil:
					return err
				}
				pack.WriteStatus(cmd.OutOrStdout(), j, allocs)
				return nil
			})
		},
	}
	flags.register(cmd)
	return cmd
}

func newPackDestroyCmd() *cobra.Command {
	var flags packFlags
	cmd := &cobra.Command{
		Use:   "destroy PACK",
		Short: "Stop and purge the pack's jobs",
		Long:  "Stop and purge the pack's jobs. Pass the same --var values as for run: they decide the job name.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			adapter, err := nomad.New("", "")
			if err != nil {
				return err
			}
			return flags.forEachJob(cmd, args, func(_ *pack.Nomad, job *api.Job) error {
				err := adapter.Stop(cmd.Context(), &orchestrator.Deployment{Job: *job.ID})
				switch {
				case pack.IsNotFound(err):
					fmt.Fprintf(cmd.OutOrStdout(), "job %s: not running\n", *job.ID)
					return nil
				case err != nil:
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "job %s stopped and purged\n", *job.ID)
				return nil
			})
		},
	}
	flags.register(cmd)
	return cmd
}

// sortedNames lists jobs first, then auxiliary files, each alphabetically.
func sortedNames(files map[string]string) []string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	isJob := func(n string) bool { return strings.HasSuffix(n, ".nomad") }
	sort.Slice(names, func(i, j int) bool {
		if isJob(names[i]) != isJob(names[j]) {
			return isJob(names[i])
		}
		return names[i] < names[j]
	})
	return names
}

func init() {
	rootCmd.AddCommand(newPackCmd())
}
