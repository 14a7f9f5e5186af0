import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context';

export function registerBusinessOAuth(_app: FastifyInstance, _ctx: SandboxContext): void {}
