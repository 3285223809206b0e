/** The domain error hierarchy; http/errors.ts maps it to status codes in exactly one place. */
export type ErrorDetail = { path: string; message: string };

export abstract class DomainError extends Error {
  abstract readonly code: string;
  readonly details: ErrorDetail[];

  constructor(message: string, details: ErrorDetail[] = []) {
    super(message);
    this.details = details;

    this.name = new.target.name;
  }
}

export class ValidationError extends DomainError {
  readonly code = 'validation_failed';
}

export class NotFoundError extends DomainError {
  readonly code = 'not_found';
}

export class ConflictError extends DomainError {
  readonly code = 'conflict';
}

/** A request whose command would not fit one Kafka record (RECORD_LIMIT_BYTES). */
export class PayloadTooLargeError extends DomainError {
  readonly code = 'payload_too_large';
}

export type SerializedDomainError = {
  kind: 'validation' | 'not_found' | 'conflict' | 'internal';
  message: string;
  details: ErrorDetail[];
};

/** Deciders refuse with these three; any other domain error reaching a processor is its fault, not the client's. */
export function serializeDomainError(error: DomainError): SerializedDomainError {
  const kind =
    error instanceof ValidationError
      ? 'validation'
      : error instanceof NotFoundError
        ? 'not_found'
        : error instanceof ConflictError
          ? 'conflict'
          : 'internal';
  return { kind, message: error.message, details: error.details };
}

/** Turns a processor's rejection back into the error the edge throws; `internal` is a server fault, not the client's. */
export function deserializeDomainError(error: SerializedDomainError): Error {
  switch (error.kind) {
    case 'validation':
      return new ValidationError(error.message, error.details);
    case 'not_found':
      return new NotFoundError(error.message, error.details);
    case 'conflict':
      return new ConflictError(error.message, error.details);
    case 'internal':
      return new Error(error.message);
    default: {
      const exhaustive: never = error.kind;
      throw new Error(`unknown domain error kind ${String(exhaustive)}`);
    }
  }
}
