import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context';

export function registerShopOAuth(_app: FastifyInstance, _ctx: SandboxContext): void {}
