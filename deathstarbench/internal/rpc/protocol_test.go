package rpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	sn "github.com/orchbench/orchbench/deathstarbench/socialnetwork/thrift/gen-go/socialnet"
)

func samplePost(textLen int) *sn.Post {
	return &sn.Post{
		PostID:       7,
		Creator:      &sn.Creator{UserID: 3, Username: "username_3"},
		ReqID:        -1,
		Text:         strings.Repeat("x", textLen),
		UserMentions: []*sn.UserMention{{UserID: 4, Username: "username_4"}},
		Media:        []*sn.Media{{MediaID: 9, MediaType: "png"}},
		Urls:         []*sn.URL{{ShortenedURL: "http://short-url/abc", ExpandedURL: "http://" + strings.Repeat("e", 120)}},
		Timestamp:    1700000000000,
		PostType:     sn.PostType_POST,
	}
}

// The stock protocol writes, ours reads, and the other way round: the
// bytes on the wire are Thrift's binary protocol unchanged, for strings
// on both sides of the stock reader's 64-byte fast path.
func TestBinaryProtocolReadsWhatTheStockProtocolWritesAndBack(t *testing.T) {
	ctx := context.Background()
	conf := &thrift.TConfiguration{}
	for _, n := range []int{0, 1, 63, 64, 65, 4096, 1 << 20} {
		want := samplePost(n)

		stockBuf := thrift.NewTMemoryBuffer()
		if err := want.Write(ctx, thrift.NewTBinaryProtocolConf(stockBuf, conf)); err != nil {
			t.Fatal(err)
		}
		var got sn.Post
		if err := Unmarshal(ctx, stockBuf.Bytes(), &got); err != nil {
			t.Fatalf("text of %d bytes: %v", n, err)
		}
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("text of %d bytes: read back %+v", n, &got)
		}

		ours, err := Marshal(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		var back sn.Post
		if err := back.Read(ctx, thrift.NewTBinaryProtocolConf(&thrift.TMemoryBuffer{Buffer: bytes.NewBuffer(ours)}, conf)); err != nil {
			t.Fatalf("stock reader on ours, %d bytes: %v", n, err)
		}
		if !reflect.DeepEqual(&back, want) {
			t.Fatalf("text of %d bytes: the stock reader got %+v", n, &back)
		}
	}
}

// A length beyond what the frame holds is refused before it is allocated:
// the guard that Thrift's own reader buys with its copy.
func TestBinaryProtocolRefusesALengthBeyondTheFrame(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		length int32
		kind   int
	}{
		{"past the end", 1 << 30, thrift.SIZE_LIMIT},
		{"negative", -5, thrift.NEGATIVE_SIZE},
	} {
		buf := thrift.NewTMemoryBuffer()
		writer := thrift.NewTBinaryProtocolConf(buf, &thrift.TConfiguration{})
		if err := writer.WriteI32(ctx, c.length); err != nil {
			t.Fatal(err)
		}
		if _, err := buf.WriteString("only a few bytes"); err != nil {
			t.Fatal(err)
		}
		_, err := NewBinaryProtocol(buf, &thrift.TConfiguration{}).ReadString(ctx)
		var perr thrift.TProtocolException
		if !errors.As(err, &perr) || perr.TypeId() != c.kind {
			t.Errorf("%s: error %v, want a protocol exception of type %d", c.name, err, c.kind)
		}
	}
}

func TestUnmarshalRefusesTrailingBytes(t *testing.T) {
	ctx := context.Background()
	data, err := Marshal(ctx, samplePost(10))
	if err != nil {
		t.Fatal(err)
	}
	var post sn.Post
	if err := Unmarshal(ctx, append(data, 0, 0), &post); err == nil {
		t.Fatal("two bytes after a post were accepted")
	}
	if err := Unmarshal(ctx, data[:len(data)-3], &post); err == nil {
		t.Fatal("a truncated post was accepted")
	}
}

// writeCountingConn counts the writes reaching the socket.
type writeCountingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *writeCountingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// A call leaves in one write, not one for the frame's length and one for
// its body: each write is a system call and, with TCP_NODELAY, a packet.
func TestAClientCallIsOneWrite(t *testing.T) {
	server := newCountingServer(t)
	nc, err := net.Dial("tcp", server.addr())
	if err != nil {
		t.Fatal(err)
	}
	counting := &writeCountingConn{Conn: nc}
	cn := newConn(counting, &thrift.TConfiguration{})
	defer cn.transport.Close()
	client := sn.NewUniqueIdServiceClient(cn.client)
	for i := int64(1); i <= 3; i++ {
		id, err := client.ComposeUniqueId(context.Background(), i, sn.PostType_POST)
		if err != nil || id != 2*i {
			t.Fatalf("call %d: %d, %v", i, id, err)
		}
		if got := counting.writes.Load(); got != i {
			t.Fatalf("after %d calls, %d writes to the socket", i, got)
		}
	}
}

// The server's answers leave the same way, a frame larger than the
// buffer in as few writes as it takes.
func TestAServerAnswerIsOneWrite(t *testing.T) {
	client, server := net.Pipe()
	go io.Copy(io.Discard, client)
	defer client.Close()
	counting := &writeCountingConn{Conn: server}
	trans, err := serverTransports(&thrift.TConfiguration{}).GetTransport(thrift.NewTSocketFromConnConf(counting, &thrift.TConfiguration{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{100, frameWriteBuffer - 4, 3 * frameWriteBuffer} {
		before := counting.writes.Load()
		if _, err := trans.Write(make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		if err := trans.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := int64((size + 4 + frameWriteBuffer - 1) / frameWriteBuffer)
		if got := counting.writes.Load() - before; got > want {
			t.Errorf("a frame of %d bytes took %d writes, want at most %d", size, got, want)
		}
	}
}
