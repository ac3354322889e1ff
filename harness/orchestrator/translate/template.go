package translate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// envTemplate translates a consul-template stanza with env = true. Each line
// is KEY=value. A plain value passes through. A value with template actions
// must look up exactly one service of this job (`service "NAME"` or
// `service "NAME|any"`, in range/with/index/if actions over .Address and
// .Port, filtered by .Checks if need be): everything from the first action to the last becomes NAME:<port>,
// the DNS name on the job's network that stands for every replica, with
// the text before and after kept. Anything else is refused, naming the
// stanza. Values are literal, as Nomad keeps them.
func (t *translator) envTemplate(w where, i int, tmpl *api.Template) (map[string]string, error) {
	stanza := fmt.Sprintf("template %d", i+1)
	if d := deref(tmpl.DestPath); d != "" {
		stanza += fmt.Sprintf(" (destination %s)", d)
	}
	switch {
	case deref(tmpl.SourcePath) != "":
		return nil, w.errorf("%s: a source file is not supported", stanza)
	case !deref(tmpl.Envvars):
		return nil, t.instancesFile(w, stanza, tmpl)
	case deref(tmpl.EmbeddedTmpl) == "":
		return nil, w.errorf("%s: no data", stanza)
	case tmpl.ChangeScript != nil:
		return nil, w.errorf("%s: change_script is not supported", stanza)
	}
	ld, rd := deref(tmpl.LeftDelim), deref(tmpl.RightDelim)
	if ld == "" {
		ld = "{{"
	}
	if rd == "" {
		rd = "}}"
	}
	out := map[string]string{}
	var upstreams []string
	for n, line := range strings.Split(deref(tmpl.EmbeddedTmpl), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		at := fmt.Sprintf("%s line %d", stanza, n+1)
		key, value, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(strings.TrimPrefix(key, "export "))
		if !ok || !validEnvKey(key) || strings.Contains(key, ld) {
			return nil, w.errorf("%s: %q is not KEY=value", at, line)
		}
		first, last := strings.Index(value, ld), strings.LastIndex(value, rd)
		if strings.Contains(value, AllocIndex) {
			return nil, w.errorf("%s: %s in a template is not supported (it would read as the instance index)", at, AllocIndex)
		}
		if first < 0 && last < 0 {
			out[key] = unquote(value)
			continue
		}
		if first < 0 || last < first {
			return nil, w.errorf("%s: unbalanced template delimiters in %q", at, line)
		}
		name, err := serviceLookup(value[first:last+len(rd)], ld, rd)
		if err != nil {
			return nil, w.errorf("%s: %v", at, err)
		}
		port, known := t.portsOf[name]
		if !known {
			return nil, w.errorf("%s: service %q is not registered by any group of the job, so %s has no such name", at, name, t.target)
		}
		if port == 0 {
			return nil, w.errorf("%s: service %q has no port", at, name)
		}
		out[key] = unquote(value[:first] + name + ":" + strconv.Itoa(port) + value[last+len(rd):])
		upstreams = append(upstreams, key)
	}
	if len(upstreams) > 0 {
		t.remark(w, stanza, RemarkDiffers, fmt.Sprintf("%s name a %s DNS name (every replica) instead of listing instance addresses; rendered once, so change_mode/splay/wait do not apply", strings.Join(upstreams, ", "), t.target))
	}
	return out, nil
}

// instancesFile accepts a file template that only lists the instances of
// one service of the job (an autoscaled service's balancer reads it as they
// come and go) and leaves it out: the target's DNS name of the service,
// which an env template gives the same task, stands for every replica and
// follows the scaling itself. Any other file template is refused.
func (t *translator) instancesFile(w where, stanza string, tmpl *api.Template) error {
	data := deref(tmpl.EmbeddedTmpl)
	ld, rd := deref(tmpl.LeftDelim), deref(tmpl.RightDelim)
	if ld == "" {
		ld = "{{"
	}
	if rd == "" {
		rd = "}}"
	}
	name, err := serviceLookup(data, ld, rd)
	if err != nil {
		return w.errorf("%s: a template rendering a file is not supported, but for a list of one service's instances (%v)", stanza, err)
	}
	if _, known := t.portsOf[name]; !known {
		return w.errorf("%s: service %q is not registered by any group of the job", stanza, name)
	}
	t.remark(w, stanza, RemarkDiffers, fmt.Sprintf("the file of %s's instances is not written: on %s the service's DNS name stands for every replica", name, t.target))
	return nil
}

// unquote strips one pair of matching quotes, as env files are read.
func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// templateWords are the identifiers a service lookup may use.
var templateWords = map[string]bool{
	"range": true, "with": true, "if": true, "else": true, "end": true,
	"index": true, "service": true, "len": true, "not": true, "and": true, "or": true,
	"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
	"true": true, "false": true,
}

// templateFields are an instance's address and port, and what a filter
// over the instances may read: its checks (the node's serfHealth among
// them), their IDs and states.
var templateFields = map[string]bool{".": true, ".Address": true, ".Port": true, ".Checks": true, ".CheckID": true, ".Status": true}

// comparedTo reports whether the string at toks[i] is an operand of eq or
// ne: `eq .CheckID "serfHealth"`, `eq "passing" .Status`.
func comparedTo(toks []string, i int) bool {
	for _, back := range []int{1, 2} {
		if i >= back && (toks[i-back] == "eq" || toks[i-back] == "ne") {
			return true
		}
	}
	return false
}

// serviceLookup checks that the actions in s only look up one service and
// returns its name.
func serviceLookup(s, ld, rd string) (string, error) {
	var name string
	for len(s) > 0 {
		open := strings.Index(s, ld)
		if open < 0 {
			break
		}
		end := strings.Index(s[open:], rd)
		if end < 0 {
			return "", fmt.Errorf("unclosed action in %q", s)
		}
		action := s[open+len(ld) : open+end]
		s = s[open+end+len(rd):]
		toks, err := tokenize(action)
		if err != nil {
			return "", err
		}
		for i, tok := range toks {
			switch {
			case tok == "service":
				if i+1 >= len(toks) || !strings.HasPrefix(toks[i+1], `"`) {
					return "", fmt.Errorf("service without a quoted name in %q", action)
				}
			case strings.HasPrefix(tok, `"`) && comparedTo(toks, i):
				// a value an instance's fields are compared with (the
				// node's health check, "serfHealth"): a filter over the
				// instances, which one DNS name stands for alike
			case strings.HasPrefix(tok, `"`):
				if i == 0 || toks[i-1] != "service" {
					return "", fmt.Errorf("string %s is only allowed as a service name or compared with eq/ne, in %q", tok, action)
				}
				n, err := serviceName(strings.Trim(tok, `"`))
				if err != nil {
					return "", err
				}
				if name != "" && name != n {
					return "", fmt.Errorf("looks up services %q and %q: one line can name one service", name, n)
				}
				name = n
			case strings.HasPrefix(tok, "$"):
				if field := tok[strings.IndexByte(tok+".", '.'):]; field != "" && !templateFields[field] {
					return "", fmt.Errorf("field %s is not supported (only .Address, .Port and the checks), in %q", field, action)
				}
			case strings.HasPrefix(tok, "."):
				if !templateFields[tok] {
					return "", fmt.Errorf("field %s is not supported (only .Address, .Port and the checks), in %q", tok, action)
				}
			case isNumber(tok), tok == ":=", tok == "=", tok == ",", tok == "(", tok == ")", tok == "-", tok == "|":
			case templateWords[tok]:
			default:
				return "", fmt.Errorf("template function %q is not supported (only service lookups), in %q", tok, action)
			}
		}
	}
	if name == "" {
		return "", fmt.Errorf("no service lookup")
	}
	return name, nil
}

// serviceName strips consul-template's "|any"/"|passing" filter and refuses
// tags and datacenters.
func serviceName(arg string) (string, error) {
	name, filter, _ := strings.Cut(arg, "|")
	switch filter {
	case "", "any", "passing":
	default:
		return "", fmt.Errorf("service %q: filter %q is not supported", arg, filter)
	}
	if strings.Contains(name, "@") {
		return "", fmt.Errorf("service %q: a datacenter is not supported", arg)
	}
	if strings.Contains(name, ".") {
		return "", fmt.Errorf("service %q: a tag filter is not supported", arg)
	}
	return name, nil
}

// tokenize splits a template action into words, strings and punctuation.
func tokenize(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string in %q", s)
			}
			toks = append(toks, s[i:j+1])
			i = j + 1
		case c == ':' && i+1 < len(s) && s[i+1] == '=':
			toks = append(toks, ":=")
			i += 2
		case strings.IndexByte("=,()|-", c) >= 0:
			toks = append(toks, string(c))
			i++
		default:
			j := i
			for j < len(s) && strings.IndexByte(" \t\n\r\"=,()|", s[j]) < 0 {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
