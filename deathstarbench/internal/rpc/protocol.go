package rpc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"unsafe"

	"github.com/apache/thrift/lib/go/thrift"
)

// frameWriteBuffer sizes the buffer between a framed transport and its
// socket. Thrift's framed transport writes a frame's 4-byte length and its
// body with two writes; straight onto a socket (TCP_NODELAY, as Go sets)
// that is two system calls and two packets per message, four per call, each
// crossing the container network. Buffered, a frame up to this size leaves
// in one write; a larger one in as many as it takes.
const frameWriteBuffer = 16 << 10

// binaryProtocol is Thrift's binary protocol, byte for byte, except that a
// string or binary field is read into one allocation of its exact size.
// Thrift 0.17 copies every string of 64 bytes or more through a growing
// bytes.Buffer, so that a malformed size cannot make it allocate gigabytes;
// for the social network's posts (texts, URLs) that copy was a tenth of a
// home-timeline read's CPU. The same protection comes cheaper here: a
// framed transport knows how many bytes its frame still holds, and a size
// beyond that is refused before anything is allocated.
type binaryProtocol struct {
	*thrift.TBinaryProtocol
	trans thrift.TRichTransport
	conf  *thrift.TConfiguration
}

// NewBinaryProtocol returns the protocol every client and server of the
// social network speaks over trans.
func NewBinaryProtocol(trans thrift.TTransport, conf *thrift.TConfiguration) thrift.TProtocol {
	rich, ok := trans.(thrift.TRichTransport)
	if !ok {
		rich = thrift.NewTRichTransport(trans)
	}
	return &binaryProtocol{TBinaryProtocol: thrift.NewTBinaryProtocolConf(trans, conf), trans: rich, conf: conf}
}

type binaryProtocolFactory struct{ conf *thrift.TConfiguration }

func (f binaryProtocolFactory) GetProtocol(trans thrift.TTransport) thrift.TProtocol {
	return NewBinaryProtocol(trans, f.conf)
}

// ReadString reads a string without copying it a second time: the bytes
// are freshly allocated and referenced by nothing else.
func (p *binaryProtocol) ReadString(ctx context.Context) (string, error) {
	b, err := p.readSized(ctx)
	if err != nil || len(b) == 0 {
		return "", err
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}

// ReadBinary reads a binary field as ReadString does.
func (p *binaryProtocol) ReadBinary(ctx context.Context) ([]byte, error) {
	b, err := p.readSized(ctx)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func (p *binaryProtocol) readSized(ctx context.Context) ([]byte, error) {
	size, err := p.ReadI32(ctx)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.NEGATIVE_SIZE, fmt.Errorf("negative length %d", size))
	}
	if size == 0 {
		return nil, nil
	}
	// A transport that does not know its remaining bytes says MaxUint64;
	// the configured message size bounds it then.
	limit := p.trans.RemainingBytes()
	if limit == math.MaxUint64 {
		limit = uint64(p.conf.GetMaxMessageSize())
	}
	if uint64(size) > limit {
		return nil, thrift.NewTProtocolExceptionWithType(thrift.SIZE_LIMIT, fmt.Errorf("length %d exceeds the %d bytes left", size, limit))
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(p.trans, buf); err != nil {
		return nil, thrift.NewTProtocolException(err)
	}
	return buf, nil
}

// Marshal encodes a Thrift struct in the binary protocol, as it travels
// in a call: the encoding the services use for the values they cache.
func Marshal(ctx context.Context, value thrift.TStruct) ([]byte, error) {
	buf := thrift.NewTMemoryBufferLen(512)
	if err := value.Write(ctx, NewBinaryProtocol(buf, &thrift.TConfiguration{})); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes what Marshal encoded into value.
func Unmarshal(ctx context.Context, data []byte, value thrift.TStruct) error {
	buf := &thrift.TMemoryBuffer{Buffer: bytes.NewBuffer(data)}
	if err := value.Read(ctx, NewBinaryProtocol(buf, &thrift.TConfiguration{})); err != nil {
		return err
	}
	if buf.Len() != 0 {
		return fmt.Errorf("%d bytes after the value", buf.Len())
	}
	return nil
}
