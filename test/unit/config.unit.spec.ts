import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.ts';
import { brokersProblem, databaseUrlProblem, ledgerSettings } from '../../ledger/config.ts';
import { reasonOf, redactUrl, StartupError } from '../../ledger/startup-error.ts';

const base = { AUTH_DEV_SECRET: 'a-development-secret-0123456789' };

/** The StartupError loadConfig throws for these settings. */
const refusal = (env: Record<string, string>): StartupError => {
  try {
    loadConfig({ ...base, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(StartupError);
    return error as StartupError;
  }
  throw new Error('accepted');
};

describe('configuration', () => {
  it('takes the defaults and valid values', () => {
    expect(loadConfig(base)).toMatchObject({ KAFKA_BROKERS: '127.0.0.1:19092', DATABASE_URL: expect.stringMatching(/^postgres:/) });
    const config = loadConfig({
      ...base,
      KAFKA_BROKERS: 'kafka-1.internal:9092, kafka_2:9093,10.0.0.7:19092',
      DATABASE_URL: 'postgresql://ledger:p%40ss@db.example.com:6543/commerce_ledger?sslmode=require',
    });
    expect(config.KAFKA_BROKERS).toBe('kafka-1.internal:9092, kafka_2:9093,10.0.0.7:19092');
  });

  it.each([
    ['garbage', '"garbage" is not one'],
    ['127.0.0.1', '"127.0.0.1" is not one'],
    ['127.0.0.1:19092,', 'an entry is empty'],
    ['host:0', '"host:0" is not one'],
    ['host:65536', '"host:65536" is not one'],
    ['host:port', '"host:port" is not one'],
    ['[::1]:9092', '"[::1]:9092" is not one'],
    ['kafka://host:9092', '"kafka://host:9092" is not one'],
  ])('refuses KAFKA_BROKERS=%s in one line naming the setting and the value', (value, why) => {
    expect(brokersProblem(value)).toContain(why);
    const { message } = refusal({ KAFKA_BROKERS: value });
    expect(message).toBe(`invalid configuration: KAFKA_BROKERS=${JSON.stringify(value)}: ${brokersProblem(value)}`);
    expect(message).toContain('host:port');
    expect(message).not.toContain('\n');
  });

  it.each([
    ['garbage', 'expected a URL'],
    ['http://127.0.0.1:5432/commerce_ledger', 'postgres:// or postgresql://'],
    ['postgres://postgres@127.0.0.1:5432', 'expected a database name'],
    ['postgres://postgres@127.0.0.1:5432/commerce-ledger', 'must be letters, digits and _'],
  ])('refuses DATABASE_URL=%s in one line naming the setting', (value, why) => {
    expect(databaseUrlProblem(value)).toContain(why);
    const { message } = refusal({ DATABASE_URL: value });
    expect(message).toMatch(/^invalid configuration: DATABASE_URL="[^"]*": /);
    expect(message).toContain(why);
    expect(message).not.toContain('\n');
  });

  it('masks the password of a URL it names and never shows a secret', () => {
    const { message } = refusal({ DATABASE_URL: 'postgres://ledger:hunter2@db:5432/', WEBHOOK_SECRET_KEY: 'too-short-hunter3' });
    expect(message).toContain('DATABASE_URL="postgres://ledger:***@db:5432/"');
    expect(message).toContain('WEBHOOK_SECRET_KEY (value hidden)');
    expect(message).not.toMatch(/hunter/);
  });

  it('takes an optional SMTP_URL for email notices, masking its password in a refusal, and a NOTICE_FROM', () => {
    expect(loadConfig(base).SMTP_URL).toBeUndefined();
    expect(loadConfig(base).NOTICE_FROM).toBe('commerce-ledger <no-reply@localhost>');
    const config = loadConfig({ ...base, SMTP_URL: 'smtps://mailer:s3cret@mail.example.com:465', NOTICE_FROM: 'Shop <exports@shop.test>' });
    expect(config).toMatchObject({ SMTP_URL: 'smtps://mailer:s3cret@mail.example.com:465', NOTICE_FROM: 'Shop <exports@shop.test>' });
    const { message } = refusal({ SMTP_URL: 'http://mailer:s3cret@mail.example.com' });
    expect(message).toContain('SMTP_URL');
    expect(message).not.toContain('s3cret');
  });

  it('names every bad setting at once, with the value tried', () => {
    const { message } = refusal({ PORT: 'abc', KAFKA_BROKERS: 'garbage', LOG_LEVEL: 'loud' });
    expect(message).toMatch(/^invalid configuration: /);
    expect(message).toContain('PORT="abc"');
    expect(message).toContain('KAFKA_BROKERS="garbage"');
    expect(message).toContain('LOG_LEVEL="loud"');
  });

  it('runs every role unless SERVICE_ROLES names some, and refuses a role it does not know', () => {
    expect([...loadConfig(base).SERVICE_ROLES]).toEqual(['api', 'processors', 'projections', 'streams']);
    expect([...loadConfig({ ...base, SERVICE_ROLES: ' api , streams' }).SERVICE_ROLES]).toEqual(['api', 'streams']);
    expect(refusal({ SERVICE_ROLES: 'api,workers' }).message).toContain('SERVICE_ROLES="api,workers"');
    expect(refusal({ SERVICE_ROLES: ' , ' }).message).toContain('SERVICE_ROLES');
  });

  it("takes the workers' tunables, defaulting to what they were before they became settings", () => {
    expect(loadConfig(base)).toMatchObject({
      BULK_SLICE_ITEMS: 500,
      BULK_SLICES_IN_FLIGHT: 4,
      BULK_JOBS_AT_ONCE: 4,
      EXPORTS_AT_ONCE: 2,
      EXPORT_GIVE_UP_AFTER_MS: 600_000,
      NOTICE_LINK_SECONDS: 86_400,
      NOTICES_AT_ONCE: 8,
      FEED_BUILDS_AT_ONCE: 2,
      FEED_REST_FACTOR: 4,
      FEED_PAGE_SIZE: 1_000,
      FEED_READ_MODEL_TIMEOUT_MS: 30_000,
      CHECKOUT_COMPLETION_TIMEOUT_SECONDS: 30,
    });
    expect(loadConfig({ ...base, BULK_JOBS_AT_ONCE: '16', FEED_PAGE_SIZE: '250' })).toMatchObject({
      BULK_JOBS_AT_ONCE: 16,
      FEED_PAGE_SIZE: 250,
    });
    expect(refusal({ EXPORTS_AT_ONCE: '0' }).message).toContain('EXPORTS_AT_ONCE="0"');
    expect(refusal({ CHECKOUT_COMPLETION_TIMEOUT_SECONDS: '0' }).message).toContain('CHECKOUT_COMPLETION_TIMEOUT_SECONDS="0"');
  });

  it("keeps the ledger runtime's settings free of the domain", () => {
    const names = Object.keys(ledgerSettings.shape);
    expect(names).toContain('KAFKA_BROKERS');
    expect(names.filter((name) => /^(FEED|BULK|UNIFIED|PUSH|SMTP|NOTICE|S3|STORAGE|WEBHOOK|EXPORT)_?/.test(name))).toEqual([]);
  });

  it('asks for an authentication mode', () => {
    expect(() => loadConfig({})).toThrow(StartupError);
    expect(() => loadConfig({})).toThrow(/AUTH_JWKS_URL .* AUTH_DEV_SECRET/);
  });

  it('refuses production authentication with download links signed by the public development key', () => {
    const production = { AUTH_JWKS_URL: 'https://idp.example.com/.well-known/jwks.json' };
    expect(() => loadConfig(production)).toThrow(/set FILE_URL_SECRET/);
    expect(loadConfig({ ...production, FILE_URL_SECRET: 'x'.repeat(32) }).FILE_URL_SECRET).toBe('x'.repeat(32));
    // With S3 the links are presigned with the store's credentials: no file URL secret is needed.
    expect(loadConfig({ ...production, S3_BUCKET: 'exports' }).S3_BUCKET).toBe('exports');
  });
});

describe('start-up error texts', () => {
  it('redacts passwords, also from what is not a URL', () => {
    expect(redactUrl('postgres://u:secret@h:5432/db')).toBe('postgres://u:***@h:5432/db');
    expect(redactUrl('postgres://u@h:5432/db')).toBe('postgres://u@h:5432/db');
    expect(redactUrl('weird//u:secret@h')).toBe('weird//***@h');
  });

  it('gives a reason in one line, with its causes and the parts of an AggregateError', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect(reasonOf(new TypeError('fetch failed', { cause: refused }))).toBe('fetch failed: connect ECONNREFUSED 127.0.0.1:1');
    const both = new AggregateError([new Error('connect ECONNREFUSED ::1:1'), new Error('connect ECONNREFUSED 127.0.0.1:1')], '');
    expect(reasonOf(both)).toBe('connect ECONNREFUSED ::1:1; connect ECONNREFUSED 127.0.0.1:1');
    expect(reasonOf(new Error('two\n  lines'))).toBe('two lines');
    expect(reasonOf('plain')).toBe('plain');
  });
});
