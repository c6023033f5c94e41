/**
 * Failures Node answers before fastify sees a request (malformed request lines and headers,
 * broken body framing, request deadlines, CONNECT, an unmet Expect), in the same envelope and
 * catalogue as everything else (errors.ts). Node's defaults answer these with an empty body or
 * none at all.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { SvcError } from '../protocol/errors.js';
import { HTTP_LIMITS } from './limits.js';

/**
 * Answers the envelope on a socket fastify never saw a request on, then closes it: destroyed once
 * the answer is written, or after a second when the peer does not read (it must not keep the fd).
 */
function answerAndClose(socket: Socket, se: SvcError): void {
  const body = JSON.stringify(se.toEnvelope());
  socket.end(`HTTP/1.1 ${se.httpStatus} ${STATUS_CODES[se.httpStatus] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  socket.destroySoon();
  setTimeout(() => socket.destroy(), 1000).unref();
}

/** What Node's parser or its deadlines refused, as the envelope (the request line may be unreadable, so no path). */
export function clientErrorAsSvcError(code: string | undefined): SvcError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new SvcError(
        'invalid_argument',
        `request: not received in time (headers within ${HTTP_LIMITS.headers_timeout_s} s, the whole request within ${HTTP_LIMITS.request_timeout_s} s)`,
        { field: 'request', headers_timeout_s: HTTP_LIMITS.headers_timeout_s, request_timeout_s: HTTP_LIMITS.request_timeout_s },
        { status: 408 },
      );
    case 'HPE_HEADER_OVERFLOW':
      return new SvcError(
        'invalid_argument',
        `headers: the request line and headers exceed ${HTTP_LIMITS.max_header_bytes} bytes`,
        { field: 'headers', max_bytes: HTTP_LIMITS.max_header_bytes },
        { status: 431 },
      );
    case 'HPE_INVALID_METHOD':
      return new SvcError('invalid_argument', 'method: not an HTTP method', { field: 'method', reason: code }, { status: 400 });
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
      return new SvcError('invalid_argument', 'body: framing is invalid (Content-Length or Transfer-Encoding)', { field: 'body', reason: code }, { status: 400 });
    default:
      return new SvcError('invalid_argument', `request: malformed HTTP request (${code ?? 'unknown parser error'})`, { field: 'request', reason: code ?? null }, { status: 400 });
  }
}

/** Sockets whose error answer waits for an earlier answer to finish (Node may report the error again meanwhile). */
const answering = new WeakSet<Socket>();

/**
 * fastify's clientErrorHandler: Node's parser failed or a request deadline passed. Answers the
 * envelope and closes the socket, since after a parse error the framing cannot be trusted. When
 * the bad bytes were pipelined behind a complete request, that request's answer goes out first
 * (Node's default would cut it off): answers on one connection keep the order of the requests.
 * When they are the body of the request being answered, that request is the bad one: answer now.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const se = clientErrorAsSvcError(err.code);
  // Node's own field for the response under way on this socket (its default handler reads it too).
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!inFlight || inFlight.writableFinished || !inFlight.req.complete) return answerAndClose(socket, se);
  if (answering.has(socket)) return;
  answering.add(socket);
  inFlight.once('close', () => (socket.writable ? answerAndClose(socket, se) : socket.destroy()));
}

/** Node's 'connect' event: this responder is no proxy; without a listener Node would drop the socket without a word. */
export function refuseConnect(_req: IncomingMessage, socket: Socket): void {
  answerAndClose(socket, new SvcError('invalid_argument', 'method: CONNECT is not served (this responder is not a proxy)', { field: 'method' }, { status: 400 }));
}

/** Node's 'checkExpectation' event: an Expect other than 100-continue, refused in the envelope (Node would send an empty 417). */
export function expectationFailed(req: IncomingMessage, res: ServerResponse): void {
  const se = new SvcError('invalid_argument', `expect: ${JSON.stringify(req.headers.expect ?? '')} cannot be met (only 100-continue is)`, { field: 'expect' }, { status: 417 });
  const body = JSON.stringify(se.toEnvelope((req.url ?? '').split('?')[0]));
  res.writeHead(417, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}
