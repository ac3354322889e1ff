package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/loadgen"
	"github.com/orchbench/orchbench/harness/orchestrator"
	"github.com/orchbench/orchbench/harness/orchestrator/translate"
	"github.com/orchbench/orchbench/harness/placement"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LoadRunner runs the load generator as a Kubernetes Job (one pod, never
// retried) of the orchbench image on the node's network, as Nomad's batch
// job and Swarm's replicated job run it: the same image, the same 256 MiB
// memory limit, no CPU cap unless the step sets generator_cores, the flags
// and script in its environment. The result comes back in the pod's log
// (loadjob --result-to-log), which the API serves wherever the harness
// runs: a pod's files are on its node, which is this machine only on the
// embedded cluster.
type LoadRunner struct {
	o *Orchestrator
	// Image is the orchbench image (default orchbench/orchbench:local).
	Image string
}

// loadNamespace holds the load jobs.
const loadNamespace = "orchbench-load"

// clientToleration lets the load job onto the emulated cluster's client
// node, which cluster/nodes-k8s.sh taints so that applications stay off
// it (a node without the taint, the embedded one, takes the job as before).
var clientToleration = corev1.Toleration{Key: placement.NodeRole, Operator: corev1.TolerationOpEqual, Value: "client", Effect: corev1.TaintEffectNoSchedule}

// loadCPURequest is the generator's CPU weight when it has no cap: what
// jobs/loadgen.nomad.hcl reserves (500 MHz, a fifth of a core here); a
// container with no request would get the kernel's minimum weight and be
// starved, and a whole core would not fit beside a scaled-out application.
const loadCPURequest = "200m"

const (
	resultDir    = "/out"
	resultInJob  = resultDir + "/result.json"
	scriptInJob  = "/script.lua"
	loadTaskName = "load"
)

func (*LoadRunner) Name() string { return Name }

// Run creates the Job, waits for its pod to end, reads the result and the
// generator's output, and deletes the Job.
func (l *LoadRunner) Run(ctx context.Context, req orchestrator.LoadRequest) (*loadgen.Result, []byte, error) {
	vars, err := orchestrator.LoadJobEnv(req, scriptInJob)
	if err != nil {
		return nil, nil, err
	}
	env := make([]corev1.EnvVar, 0, len(vars))
	for _, v := range vars {
		env = append(env, corev1.EnvVar{Name: v.Name, Value: v.Value})
	}
	if err := l.o.ensureNamespace(ctx, loadNamespace); err != nil {
		return nil, nil, err
	}
	res := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", orchestrator.LoadMemoryMiB)), corev1.ResourceCPU: resource.MustParse(loadCPURequest)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", orchestrator.LoadMemoryMiB))},
	}
	if req.GeneratorCores > 0 {
		cpu := *resource.NewMilliQuantity(int64(math.Round(req.GeneratorCores*1000)), resource.DecimalSI)
		res.Requests[corev1.ResourceCPU], res.Limits[corev1.ResourceCPU] = cpu, cpu
	}
	name := "load-" + strings.ReplaceAll(time.Now().UTC().Format("20060102t150405.000000"), ".", "-")
	zero := int32(0)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"orchbench.io/load": labelValue(req.StepID)}},
		Spec: batchv1.JobSpec{
			// a failed load step is recorded as failed; retrying would
			// silently change what was measured
			BackoffLimit: &zero,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"orchbench.io/load": labelValue(req.StepID)}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					// straight to the NodePort on the node, without a NAT hop of its own
					HostNetwork:                  true,
					AutomountServiceAccountToken: ptr(false),
					Affinity:                     &corev1.Affinity{NodeAffinity: notOnAffinity([]translate.NodeLabel{{Key: placement.NodeRole, Value: placement.LoadAvoids}})},
					Tolerations:                  []corev1.Toleration{clientToleration},
					Containers: []corev1.Container{{
						Name: loadTaskName, Image: orchestrator.LoadImage(l.Image), ImagePullPolicy: pullPolicy(orchestrator.LoadImage(l.Image)),
						Args: []string{"loadjob", "--out", resultInJob, "--result-to-log"}, Env: env, Resources: res,
						VolumeMounts: []corev1.VolumeMount{{Name: "out", MountPath: resultDir}},
					}},
					Volumes: []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
				},
			},
		},
	}
	if _, err := l.o.client.BatchV1().Jobs(loadNamespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return nil, nil, fmt.Errorf("kubernetes: create load job %s: %w", name, err)
	}
	// the job is only a vehicle; its result lives in the archive
	defer func() {
		bg := metav1.DeletePropagationBackground
		_ = l.o.client.BatchV1().Jobs(loadNamespace).Delete(context.Background(), name, metav1.DeleteOptions{PropagationPolicy: &bg})
	}()
	ctx, cancel := context.WithTimeout(ctx, req.Bound)
	defer cancel()
	pod, err := l.waitDone(ctx, name, req.MarkStarted)
	if err != nil {
		return nil, nil, err
	}
	what := fmt.Sprintf("kubernetes: load job %s (pod %s)", name, pod.Name)
	failure := podFailure(pod)
	result, raw, readErr, err := l.resultFromLog(ctx, pod.Name)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: its log, which carries the result: %w", what, err)
	}
	if errors.Is(readErr, orchestrator.ErrNoResultInLog) {
		readErr = fmt.Errorf("%w (does %s predate loadjob --result-to-log? just images orchbench, then push it to the nodes)", readErr, orchestrator.LoadImage(l.Image))
	}
	return orchestrator.LoadJobResult(what, result, readErr, failure, raw)
}

// podFailure says how a finished load pod failed ("" when it exited 0).
func podFailure(p corev1.Pod) string {
	for _, s := range p.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("exited %d (%s)", t.ExitCode, t.Reason)
		}
	}
	if p.Status.Phase != corev1.PodSucceeded {
		return fmt.Sprintf("ended %s: %s", p.Status.Phase, p.Status.Message)
	}
	return ""
}

// waitDone waits until the job's pod has ended, calling onRunning once it runs.
func (l *LoadRunner) waitDone(ctx context.Context, job string, onRunning func()) (corev1.Pod, error) {
	started := false
	for {
		list, err := l.o.client.CoreV1().Pods(loadNamespace).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
		if err == nil {
			for _, p := range list.Items {
				if why := podFailing(p); why != "" {
					return p, fmt.Errorf("kubernetes: load job %s: pod %s %s", job, p.Name, why)
				}
				switch p.Status.Phase {
				case corev1.PodRunning:
					if !started {
						started = true
						onRunning()
					}
				case corev1.PodSucceeded, corev1.PodFailed:
					if !started {
						onRunning() // a fault waiting for the start must not wait forever
					}
					return p, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return corev1.Pod{}, fmt.Errorf("kubernetes: load job %s did not finish: %w", job, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// logWriteWait bounds how long a finished pod's log may still lack the
// end of its result: the runtime copies a container's output to the log
// apart from reporting its exit.
const logWriteWait = 5 * time.Second

// resultFromLog reads the finished pod's log and takes the result out of
// it, reading again while the block is missing or short, for
// logWriteWait. err is a log that could not be read at all.
func (l *LoadRunner) resultFromLog(ctx context.Context, pod string) (res *loadgen.Result, raw []byte, readErr, err error) {
	deadline := time.Now().Add(logWriteWait)
	for {
		log, err := l.logs(ctx, pod)
		if err != nil {
			return nil, nil, nil, err
		}
		res, raw, readErr = orchestrator.ResultFromLog(log, "the log of pod "+pod)
		partial := errors.Is(readErr, orchestrator.ErrNoResultInLog) || errors.Is(readErr, orchestrator.ErrResultIncomplete)
		if !partial || time.Now().After(deadline) {
			return res, raw, readErr, nil
		}
		select {
		case <-ctx.Done():
			return res, raw, readErr, nil
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// logs is the load container's whole output: the generator's, then the result.
func (l *LoadRunner) logs(ctx context.Context, pod string) ([]byte, error) {
	return l.o.client.CoreV1().Pods(loadNamespace).GetLogs(pod, &corev1.PodLogOptions{Container: loadTaskName}).DoRaw(ctx)
}

// ensureNamespace creates a namespace unless it exists.
func (o *Orchestrator) ensureNamespace(ctx context.Context, name string) error {
	_, err := o.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"orchbench.io/managed": "true"}}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubernetes: create namespace %s: %w", name, err)
	}
	return nil
}

// labelValue fits s into a label value: at most 63 characters of
// [A-Za-z0-9._-], starting and ending alphanumeric.
func labelValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '-'
		}
	}
	s = string(b)
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-_.")
}

func ptr[T any](v T) *T { return &v }
