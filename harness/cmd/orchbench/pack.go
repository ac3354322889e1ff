package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/spf13/cobra"

	"github.com/orchbench/orchbench/harness/hooks"
	"github.com/orchbench/orchbench/harness/imageref"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/nomad"
	"github.com/orchbench/orchbench/harness/pack"
	"github.com/orchbench/orchbench/harness/placement"
)

// packFlags are shared by every pack subcommand: they all render first.
type packFlags struct {
	vars     []string
	varFiles []string
	// orchestrator is where run, status and destroy act.
	orchestrator string
	// registry is where the nodes pull the project's images (host:port)
	registry string
}

func (f *packFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.vars, "var", nil, "set a pack variable, `name=value` or packname.name=value (repeatable); "+placement.Variable+"="+strings.Join(strings.Split(placement.ModeList(), ", "), "|")+" places the instances, whatever the pack")
	cmd.Flags().StringArrayVarP(&f.varFiles, "var-file", "f", nil, "read variables from an HCL `file` of name = value lines (repeatable)")
	cmd.Flags().StringVar(&f.registry, "registry", os.Getenv(imageref.Env), "`host:port` of the registry the nodes pull the project's images from: orchbench/* images in the jobs are named there (default $"+imageref.Env+")")
}

func (f *packFlags) registerOrchestrator(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.orchestrator, "orchestrator", nomad.Name, "where to act: "+strings.Join(orchestrator.Names(), ", "))
}

// connect is the adapter --orchestrator names.
func (f *packFlags) connect(progress io.Writer) (orchestrator.Orchestrator, error) {
	return orchestrator.New(f.orchestrator, orchestrator.Config{Progress: progress})
}

func (f *packFlags) overrides() (map[string]string, error) {
	overrides := map[string]string{}
	for _, kv := range f.vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--var %q: expected name=value", kv)
		}
		overrides[strings.TrimSpace(k)] = v
	}
	return overrides, nil
}

// render finds, loads and renders the pack named by the command argument,
// through the render function sweeps use too. With an orchestrator, a pack
// that declares mhz_per_core gets its node's figure unless the user set
// one; without (render alone needs no cluster), the pack default stays.
func (f *packFlags) render(ctx context.Context, name string, o orchestrator.Orchestrator) (*pack.Rendered, error) {
	overrides, err := f.overrides()
	if err != nil {
		return nil, err
	}
	// the harness places the instances (placement.Apply in renderJobs); the pack never sees it
	if _, overrides, err = placement.Take(overrides); err != nil {
		return nil, err
	}
	dir, err := pack.Find(name)
	if err != nil {
		return nil, err
	}
	p, err := pack.Load(dir)
	if err != nil {
		return nil, err
	}
	var mhz func() (float64, error)
	if o != nil {
		mhz = func() (float64, error) {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			c, err := o.Capacity(ctx)
			return c.MHzPerCore, err
		}
	}
	return p.RenderSized(overrides, f.varFiles, mhz)
}

// renderJobs renders the pack for o and has Nomad's parser turn it into
// jobs, the single source of truth every adapter deploys.
func (f *packFlags) renderJobs(ctx context.Context, name string, o orchestrator.Orchestrator) (*nomad.Orchestrator, []*api.Job, error) {
	parser, err := nomad.New("", "")
	if err != nil {
		return nil, nil, err
	}
	r, err := f.render(ctx, name, o)
	if err != nil {
		return nil, nil, err
	}
	jobs, err := parser.ParseJobs(r)
	if err != nil {
		return nil, nil, err
	}
	overrides, err := f.overrides()
	if err != nil {
		return nil, nil, err
	}
	mode, _, err := placement.Take(overrides)
	if err != nil {
		return nil, nil, err
	}
	if err := placement.Apply(jobs, mode); err != nil {
		return nil, nil, err
	}
	registry, err := imageref.ParseRegistry(f.registry, "--registry")
	if err != nil {
		return nil, nil, err
	}
	registry.Rewrite(jobs)
	return parser, jobs, nil
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
	cmd.AddCommand(newPackRenderCmd(), newPackPlanCmd(), newPackRunCmd(), newPackStatusCmd(), newPackDestroyCmd(), newPackCheckCmd())
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
			var sizer orchestrator.Orchestrator
			if o, err := orchestrator.New(nomad.Name, orchestrator.Config{}); err == nil {
				ctx, cancel := context.WithTimeout(cmd.Context(), 3*time.Second)
				_, err = o.Capacity(ctx)
				cancel()
				if err == nil {
					sizer = o
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "note: %s left at the pack default (%v)\n", pack.MHzVariable, err)
				}
			}
			r, err := flags.render(cmd.Context(), args[0], sizer)
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
			n, jobs, err := flags.renderJobs(cmd.Context(), args[0], nil)
			if err != nil {
				return err
			}
			if _, err := n.Capacity(cmd.Context()); err == nil {
				// render again with the node's MHz, as run would
				if _, jobs, err = flags.renderJobs(cmd.Context(), args[0], n); err != nil {
					return err
				}
			}
			for _, job := range jobs {
				plan, err := n.Plan(job)
				if err != nil {
					return err
				}
				nomad.WritePlan(cmd.OutOrStdout(), job, plan)
			}
			return nil
		},
	}
	flags.register(cmd)
	return cmd
}

func newPackRunCmd() *cobra.Command {
	var flags packFlags
	var wait, skipHooks bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "run PACK",
		Short: "Run the pack's prepare hook, deploy its jobs (reusing an identical running version); with --wait, until healthy, then its setup (when fresh) and verify hooks",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			o, err := flags.connect(out)
			if err != nil {
				return err
			}
			_, jobs, err := flags.renderJobs(cmd.Context(), args[0], o)
			if err != nil {
				return err
			}
			// the prepare hook (a dataset snapshot) is not bounded by --timeout: it has its own
			hr := hooks.Runner{Out: out}
			if err := runPrepareHooks(cmd.Context(), hr, jobs); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var deployed []*orchestrator.Deployment
			for _, job := range jobs {
				w, err := orchestrator.NewWorkload(job)
				if err != nil {
					return err
				}
				d, err := o.Deploy(ctx, w)
				if err != nil {
					return err
				}
				verb := "deployed"
				if !d.Fresh {
					verb = "unchanged, already running"
				}
				fmt.Fprintf(out, "job %s version %d on %s %s\n", d.Job, d.Version, o.Name(), verb)
				deployed = append(deployed, d)
			}
			if !wait {
				return nil
			}
			for _, d := range deployed {
				if err := o.WaitHealthy(ctx, d, timeout); err != nil {
					return err
				}
				fmt.Fprintf(out, "job %s healthy on %s in %s\n", d.Job, o.Name(), d.DeployDuration.Round(100*time.Millisecond))
			}
			if skipHooks {
				return nil
			}
			return runSetupAndVerify(cmd.Context(), hr, o, deployed)
		},
	}
	flags.register(cmd)
	flags.registerOrchestrator(cmd)
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until every allocation is running and healthy")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Minute, "how long --wait waits")
	cmd.Flags().BoolVar(&skipHooks, "skip-hooks", false, "with --wait, do not run the setup and verify hooks (the prepare hook always runs: the jobs may need what it makes)")
	return cmd
}

func newPackStatusCmd() *cobra.Command {
	var flags packFlags
	cmd := &cobra.Command{
		Use:   "status PACK",
		Short: "Show the status and allocations of the pack's Nomad jobs",
		Long:  "Show the status and allocations of the pack's Nomad jobs. Pass the same --var values as for run: they decide the job name.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, jobs, err := flags.renderJobs(cmd.Context(), args[0], nil)
			if err != nil {
				return err
			}
			for _, job := range jobs {
				j, allocs, err := n.Status(*job.ID)
				switch {
				case nomad.IsNotFound(err):
					fmt.Fprintf(cmd.OutOrStdout(), "job %q: not running\n", *job.ID)
					continue
				case err != nil:
					return err
				}
				nomad.WriteStatus(cmd.OutOrStdout(), j, allocs)
			}
			return nil
		},
	}
	flags.register(cmd)
	return cmd
}

func newPackDestroyCmd() *cobra.Command {
	var flags packFlags
	cmd := &cobra.Command{
		Use:   "destroy PACK",
		Short: "Stop and remove the pack's jobs (Nomad: purge; Swarm: services, network, volumes)",
		Long:  "Stop and remove the pack's jobs. Pass the same --var values as for run: they decide the job name.",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := flags.connect(cmd.OutOrStdout())
			if err != nil {
				return err
			}
			_, jobs, err := flags.renderJobs(cmd.Context(), args[0], nil)
			if err != nil {
				return err
			}
			for _, job := range jobs {
				err := o.Stop(cmd.Context(), &orchestrator.Deployment{Orchestrator: o.Name(), Job: *job.ID})
				switch {
				case nomad.IsNotFound(err):
					fmt.Fprintf(cmd.OutOrStdout(), "job %s: not running on %s\n", *job.ID, o.Name())
					continue
				case err != nil:
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "job %s stopped and removed on %s\n", *job.ID, o.Name())
			}
			return nil
		},
	}
	flags.register(cmd)
	flags.registerOrchestrator(cmd)
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
