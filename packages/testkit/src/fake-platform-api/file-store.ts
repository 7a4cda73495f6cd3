import type { FakeFile, FakePlatform, SeededFile } from './types.js';

interface StoredFile extends SeededFile {
  id: string;
}

/** What a file route answers: the bytes, or a platform-shaped refusal. */
/** `account`: the Slack team whose token fetched it. */
export type FileAnswer = { platform: FakePlatform; account?: string } & (
  | { status: 200; bytes: Buffer; contentType: string }
  | { status: 401 | 404; bytes?: undefined }
);

// Each platform's file URL shape: Slack's `url_private`, Telegram's file path (after getFile), Discord's
// CDN and a gateway's file server. Slack wants the bot token as a Bearer header, Telegram has it in the
// path, the CDN and the gateway URLs need none.
const SLACK = /^\/slack\/files\/([^/]+)\/[^/]+$/;
const TELEGRAM = /^\/telegram\/file\/bot([^/]+)\/documents\/([^/]+)\/[^/]+$/;
const OPEN = /^\/(discord)\/cdn\/([^/]+)\/[^/]+$|^\/(gateway)\/files\/([^/]+)\/[^/]+$/;

/** Files the fake serves on each platform's file host, seeded by tests with real bytes. */
export class FileStore {
  private readonly files = new Map<string, StoredFile>();

  constructor(
    private readonly origin: () => string,
    /** Slack: each workspace's bot token, by team id; any of them fetches a file. */
    private readonly tokens: { slack: ReadonlyMap<string, string>; telegram: string },
  ) {}

  add(file: SeededFile): FakeFile {
    const id = `F${this.files.size + 1}`;
    this.files.set(id, { ...file, id });
    const name = encodeURIComponent(file.name);
    const origin = this.origin();
    return {
      size: file.bytes.length,
      slackUrl: `${origin}/slack/files/${id}/${name}`,
      telegramFileId: id,
      discordUrl: `${origin}/discord/cdn/${id}/${name}`,
      gatewayUrl: `${origin}/gateway/files/${id}/${name}`,
    };
  }

  /** The answer to Telegram's getFile: where the file can be downloaded. */
  telegramFile(fileId: string): { file_id: string; file_size: number; file_path: string } | undefined {
    const file = this.files.get(fileId);
    if (file === undefined) return undefined;
    const path = `documents/${file.id}/${encodeURIComponent(file.name)}`;
    return { file_id: file.id, file_size: file.bytes.length, file_path: path };
  }

  /** Undefined when the path is no file route. */
  serve(path: string, authorization: string | undefined): FileAnswer | undefined {
    const slack = SLACK.exec(path);
    if (slack) {
      const team = [...this.tokens.slack].find(([, token]) => authorization === `Bearer ${token}`)?.[0];
      return team === undefined
        ? { platform: 'slack', status: 401 }
        : { ...this.file('slack', slack[1]!), account: team };
    }
    const telegram = TELEGRAM.exec(path);
    if (telegram) {
      const authorized = telegram[1] === this.tokens.telegram;
      return authorized ? this.file('telegram', telegram[2]!) : { platform: 'telegram', status: 401 };
    }
    const open = OPEN.exec(path);
    if (!open) return undefined;
    return open[1] ? this.file('discord', open[2]!) : this.file('gateway', open[4]!);
  }

  private file(platform: FakePlatform, id: string): FileAnswer {
    const file = this.files.get(id);
    if (file === undefined) return { platform, status: 404 };
    return { platform, status: 200, bytes: file.bytes, contentType: file.contentType };
  }
}
