package nodeprobe

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/orchbench/orchbench/harness/limits"
)

// DefaultPort is the port a node's probe listens on unless told otherwise.
const DefaultPort = 7070

// maxRequestBytes bounds a request body: the largest is a namespace path
// and an address.
const maxRequestBytes = 64 << 10

// MaxAcceptorWait bounds how long one request may keep the probe waiting
// for a connection to be accepted, so no caller can hold it open for long.
const MaxAcceptorWait = 30 * time.Second

// Server answers the protocol with what one Node reads. It exposes that
// node's process table, cgroups and sockets read-only, and can open a TCP
// connection from the node to an address it is given; it has no
// authentication, so it must listen only where the harness alone reaches it.
type Server struct {
	node Node
	mux  *http.ServeMux
	// Token, when set, must come in every request's TokenHeader.
	Token string
}

// NewServer serves node, naming it node.Name() in every error.
func NewServer(node Node) *Server {
	s := &Server{node: node, mux: http.NewServeMux()}
	route(s, identityEndpoint, func(context.Context, NoRequest) (IdentityResponse, error) {
		return IdentityResponse{Node: node.Name()}, nil
	})
	route(s, factsEndpoint, func(ctx context.Context, _ NoRequest) (map[string]string, error) {
		return node.Facts(ctx)
	})
	route(s, limitsEndpoint, func(ctx context.Context, r PIDRequest) (limits.Enforced, error) {
		return node.Limits(ctx, r.PID)
	})
	route(s, processesEndpoint, func(ctx context.Context, _ NoRequest) ([]limits.Membership, error) {
		return node.Processes(ctx)
	})
	route(s, cpuCgroupEndpoint, func(ctx context.Context, r PIDRequest) (string, error) {
		return node.CPUCgroupOf(ctx, r.PID)
	})
	route(s, usageEndpoint, func(ctx context.Context, r CgroupRequest) (limits.Usage, error) {
		return node.Usage(ctx, r.Cgroup)
	})
	route(s, residentEndpoint, func(ctx context.Context, r CgroupRequest) (int64, error) {
		return node.ResidentBytes(ctx, r.Cgroup)
	})
	route(s, acceptorEndpoint, func(ctx context.Context, r AcceptorRequest) (AcceptorResponse, error) {
		if r.Within <= 0 || r.Within > MaxAcceptorWait {
			return AcceptorResponse{}, fmt.Errorf("a wait of %s is not in (0, %s]", r.Within, MaxAcceptorWait)
		}
		a, found, err := node.AcceptorOf(ctx, r.NetNS, r.Addr, r.Within)
		return AcceptorResponse{Acceptor: a, Found: found}, err
	})
	route(s, executablesEndpoint, func(ctx context.Context, _ NoRequest) ([]Executable, error) {
		return node.Executables(ctx)
	})
	route(s, containerEndpoint, func(ctx context.Context, r ContainerRequest) (TaskProcess, error) {
		return node.ContainerProcess(ctx, r.ContainerID)
	})
	route(s, nomadTaskEndpoint, func(ctx context.Context, r NomadTaskRequest) (TaskProcess, error) {
		return node.NomadTaskProcess(ctx, r.AllocID, r.Task)
	})
	route(s, signalEndpoint, func(ctx context.Context, r SignalRequest) (TaskProcess, error) {
		return node.SignalContainer(ctx, r.ContainerID, r.Signal)
	})
	route(s, checkEndpoint, func(ctx context.Context, r CheckRequest) (CheckResponse, error) {
		return node.CheckContainer(ctx, r)
	})
	// the probe runs on the node it serves, so its machine is the node's
	s.mux.HandleFunc("GET /metrics", serveTaskMetrics)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// route serves one endpoint with do. A failed operation is answered with
// an Error alone (status 500): a result that came with an error, such as
// AcceptorOf's found, is not sent.
func route[Req, Resp any](s *Server, ep endpoint[Req, Resp], do func(context.Context, Req) (Resp, error)) {
	s.mux.HandleFunc("POST "+ep.path, func(w http.ResponseWriter, r *http.Request) {
		if msg, status := s.refused(r); msg != "" {
			writeJSON(w, status, &Error{Node: s.node.Name(), Op: "request to " + ep.path, Message: msg, Kind: KindRefused})
			return
		}
		var req Req
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequestBytes))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, &Error{Node: s.node.Name(), Op: "request to " + ep.path, Message: err.Error()})
			return
		}
		op := ep.op(req)
		out, err := do(r.Context(), req)
		if err != nil {
			// the local functions often begin their errors with what was
			// asked; the Error says it once
			msg := strings.TrimPrefix(err.Error(), op+": ")
			writeJSON(w, http.StatusInternalServerError, &Error{Node: s.node.Name(), Op: op, Message: msg, Kind: kindOf(err)})
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// refused says why a request is not served, and with which status: a
// request meant for another node (a resolver that points a node at the
// wrong address must fail, not read this node in its place), or one
// without the shared token.
func (s *Server) refused(r *http.Request) (string, int) {
	if s.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get(TokenHeader)), []byte(s.Token)) != 1 {
		return "the probe's token is missing or wrong (" + TokenHeader + ")", http.StatusUnauthorized
	}
	switch asked := r.Header.Get(NodeHeader); asked {
	case s.node.Name():
		return "", 0
	case "":
		return "the request does not say which node it is for (" + NodeHeader + ")", http.StatusBadRequest
	default:
		return fmt.Sprintf("this probe serves node %s, not node %s: the harness has the wrong address for node %s", s.node.Name(), asked, asked), http.StatusMisdirectedRequest
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) // the client reports a body cut short
}
