/**
 * Direct-message state, in memory per emulator instance: conversations opened by users (a
 * business cannot start one), their messages, the images uploaded for sending, the download
 * links handed out, and the automatic messages with their review. Also the messaging rules that
 * decide whether a business message may go out: the 48-hour window and its 10-message cap.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Person } from './comment-store';

export type ConversationType = 'STRANGER' | 'SINGLE';
export type MessageType = 'TEXT' | 'IMAGE' | 'SHARE_POST' | 'TEMPLATE';
export type MessageSource = 'APP' | 'WEB' | 'API' | 'OTHERS';

export interface Template {
  type: 'QA_BUTTON_CARD' | 'QA_LINK_CARD';
  title: string;
  buttons: Array<{ type: 'REPLY'; title: string; id?: string }>;
}

export interface DirectMessage {
  messageId: string;
  conversationId: string;
  fromBusiness: boolean;
  /** Milliseconds. */
  timestamp: number;
  type: MessageType;
  source: MessageSource;
  text?: string;
  imageMediaId?: string;
  sharePost?: { itemId: string; embedUrl: string };
  template?: Template;
  autoMessageType?: 'WELCOME_MESSAGE' | 'SUGGESTED_QUESTION' | 'AUTO_REPLY';
  referencedMessageId?: string;
}

export interface Conversation {
  conversationId: string;
  openId: string;
  user: Person;
  isFollower: boolean;
  /** STRANGER until the business first replies (a message request it has not accepted). */
  type: ConversationType;
  /** Milliseconds. */
  updateTime: number;
  messages: DirectMessage[];
  lastUserMessageAt?: number;
  /** Business messages since the user's last message. */
  sentInWindow: number;
}

export interface Media {
  mediaId: string;
  openId: string;
  bytes: Buffer;
  contentType: string;
  /** Sending with it is refused after this (30 days officially); messages that carry it stay downloadable. */
  expiresAt: number;
}

export interface Download {
  openId: string;
  media: Media;
  expiresAt: number;
}

/** Official window (DOC:1832184403754242): after a user message, up to 10 business messages within 48 hours. */
export const WINDOW_MS = 48 * 3_600_000;
export const WINDOW_MAX_MESSAGES = 10;

/** Why a business message may not go out now, or undefined when it may. */
export function windowRefusal(conversation: Conversation, now: number): string | undefined {
  if (conversation.lastUserMessageAt === undefined || now - conversation.lastUserMessageAt > WINDOW_MS) {
    return "The messaging window of this conversation is closed: a business account can send messages only within 48 hours after the user's last message.";
  }
  if (conversation.sentInWindow >= WINDOW_MAX_MESSAGES) {
    return `The message limit of this conversation is reached: a business account can send at most ${WINDOW_MAX_MESSAGES} messages within 48 hours after the user's last message; wait for the user to write again.`;
  }
  return undefined;
}

/**
 * IMAGE_SEND, as the emulator decides it: the conversation is SINGLE (the business has replied at
 * least once) and the user wrote within the last 48 hours. Image sends follow the same rule.
 */
export function canSendImage(conversation: Conversation, now: number): boolean {
  return (
    conversation.type === 'SINGLE' && conversation.lastUserMessageAt !== undefined && now - conversation.lastUserMessageAt <= WINDOW_MS
  );
}

// ---------------------------------------------------------------------------------------------
// Automatic messages

export const AUTO_MESSAGE_TYPES = ['WELCOME_MESSAGE', 'SUGGESTED_QUESTION', 'CHAT_PROMPT'] as const;
export type AutoMessageType = (typeof AUTO_MESSAGE_TYPES)[number];
export type AuditStatus = 'REVIEWING' | 'APPROVED' | 'REJECTED';

/**
 * Per type: the object that carries it, its fields with their length limits, how many may exist,
 * and which field makes two of them duplicates.
 */
export const AUTO_MESSAGE_SPECS: Record<AutoMessageType, { key: string; fields: Record<string, number>; max: number; identity: string }> = {
  WELCOME_MESSAGE: { key: 'welcome_message', fields: { content: 250 }, max: 1, identity: 'content' },
  SUGGESTED_QUESTION: { key: 'suggested_question', fields: { question: 80, answer: 200 }, max: 3, identity: 'question' },
  CHAT_PROMPT: { key: 'chat_prompt', fields: { title: 18, content: 150 }, max: 6, identity: 'title' },
};

export interface AutoMessage {
  autoMessageId: string;
  type: AutoMessageType;
  auditStatus: AuditStatus;
  content: Record<string, string>;
  /** Bumped on each update, so a review scheduled for an earlier version does not approve this one. */
  version: number;
}

interface AccountMessaging {
  conversations: Map<string, Conversation>;
  media: Map<string, Media>;
  auto: Record<AutoMessageType, AutoMessage[]>;
  autoStatus: Record<AutoMessageType, 'ENABLE' | 'DISABLE'>;
  /** Where media/download's links point, when a test moved them off the emulator (a foreign host). */
  downloadOrigin?: string;
}

let sequence = 0;

/** Message and auto-message ids: 19-digit numbers (strings in every payload). */
function numericId(now: number): string {
  sequence = (sequence + 1) % 100_000;
  return `7${String(Math.floor(now)).padStart(13, '0').slice(-13)}${String(sequence).padStart(5, '0')}`;
}

export class MessageStore {
  private readonly accounts = new Map<string, AccountMessaging>();
  private readonly downloads = new Map<string, Download>();

  constructor(private readonly now: () => number) {}

  private state(openId: string): AccountMessaging {
    let state = this.accounts.get(openId);
    if (!state) {
      state = {
        conversations: new Map(),
        media: new Map(),
        auto: { WELCOME_MESSAGE: [], SUGGESTED_QUESTION: [], CHAT_PROMPT: [] },
        autoStatus: { WELCOME_MESSAGE: 'ENABLE', SUGGESTED_QUESTION: 'ENABLE', CHAT_PROMPT: 'ENABLE' },
      };
      this.accounts.set(openId, state);
    }
    return state;
  }

  conversations(openId: string): Conversation[] {
    return [...this.state(openId).conversations.values()];
  }

  conversation(openId: string, conversationId: string): Conversation | undefined {
    return this.state(openId).conversations.get(conversationId);
  }

  conversationWith(openId: string, uniqueIdentifier: string): Conversation | undefined {
    return this.conversations(openId).find((c) => c.user.uniqueIdentifier === uniqueIdentifier);
  }

  /**
   * A conversation a user starts. Its id always contains a `+`, as platform ids may: a client that
   * does not percent-encode it in a query string sends a space and gets "conversation_id is invalid".
   */
  open(openId: string, user: Person, isFollower: boolean): Conversation {
    const conversation: Conversation = {
      conversationId: `0+${randomBytes(15).toString('base64')}`,
      openId,
      user,
      isFollower,
      type: 'STRANGER',
      updateTime: this.now(),
      messages: [],
      sentInWindow: 0,
    };
    this.state(openId).conversations.set(conversation.conversationId, conversation);
    return conversation;
  }

  /** Appends a message; a user's message opens a new window, a business API message counts against it. */
  add(conversation: Conversation, message: Omit<DirectMessage, 'messageId' | 'conversationId' | 'timestamp'>): DirectMessage {
    const now = this.now();
    const stored: DirectMessage = {
      ...message,
      messageId: numericId(now),
      conversationId: conversation.conversationId,
      timestamp: Math.floor(now),
    };
    conversation.messages.push(stored);
    conversation.updateTime = stored.timestamp;
    if (!message.fromBusiness) {
      conversation.lastUserMessageAt = now;
      conversation.sentInWindow = 0;
    } else if (!message.autoMessageType) {
      conversation.sentInWindow += 1;
      conversation.type = 'SINGLE';
    }
    return stored;
  }

  saveMedia(
    openId: string,
    bytes: Buffer,
    contentType: string,
    mediaId = `v0${createHash('sha256').update(bytes).update(randomBytes(8)).digest('hex').slice(0, 30)}`,
  ): Media {
    const media: Media = { mediaId, openId, bytes, contentType, expiresAt: this.now() + 30 * 86_400_000 };
    this.state(openId).media.set(mediaId, media);
    return media;
  }

  media(openId: string, mediaId: string): Media | undefined {
    return this.state(openId).media.get(mediaId);
  }

  grantDownload(media: Media, validForMs: number): string {
    const token = randomBytes(18).toString('base64url');
    this.downloads.set(token, { openId: media.openId, media, expiresAt: this.now() + validForMs });
    return token;
  }

  download(token: string): Download | undefined {
    return this.downloads.get(token);
  }

  /** The origin of the account's download links: the emulator's own unless a test set another. */
  downloadOrigin(openId: string): string | undefined {
    return this.state(openId).downloadOrigin;
  }

  setDownloadOrigin(openId: string, origin: string | undefined): void {
    this.state(openId).downloadOrigin = origin;
  }

  autoMessages(openId: string, type: AutoMessageType): AutoMessage[] {
    return this.state(openId).auto[type];
  }

  autoMessage(openId: string, autoMessageId: string): AutoMessage | undefined {
    return AUTO_MESSAGE_TYPES.flatMap((t) => this.state(openId).auto[t]).find((m) => m.autoMessageId === autoMessageId);
  }

  addAutoMessage(openId: string, type: AutoMessageType, content: Record<string, string>): AutoMessage {
    const message: AutoMessage = { autoMessageId: numericId(this.now()), type, auditStatus: 'REVIEWING', content, version: 1 };
    this.state(openId).auto[type].push(message);
    return message;
  }

  removeAutoMessage(openId: string, message: AutoMessage): void {
    const list = this.state(openId).auto[message.type];
    list.splice(list.indexOf(message), 1);
  }

  /** Reorders a type's messages; the caller has checked that `ids` names each of them once. */
  sortAutoMessages(openId: string, type: AutoMessageType, ids: string[]): void {
    const list = this.state(openId).auto[type];
    const byId = new Map(list.map((m) => [m.autoMessageId, m]));
    list.splice(0, list.length, ...ids.map((id) => byId.get(id)!));
  }

  autoStatus(openId: string, type: AutoMessageType): 'ENABLE' | 'DISABLE' {
    return this.state(openId).autoStatus[type];
  }

  setAutoStatus(openId: string, type: AutoMessageType, status: 'ENABLE' | 'DISABLE'): void {
    this.state(openId).autoStatus[type] = status;
  }
}
