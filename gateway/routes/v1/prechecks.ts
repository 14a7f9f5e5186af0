import { PrecheckService } from '../../../gen/vps/shop/v1/shop_pb';
import { precheckJson } from '../../presenters/prechecks';
import { okEnvelope } from '../../schemas/common';
import { PrecheckIdParams, PrecheckJson, SubmitPrecheckBody } from '../../schemas/prechecks';
import { defineRoute, type RpcRoute } from '../../rpc-route';

/** POST /v1/publish/tts/precheck and GET /v1/publish/tts/precheck/{taskId}. */
export const precheckRoutes: RpcRoute[] = [
  defineRoute({
    method: 'POST',
    url: '/publish/tts/precheck',
    summary: 'Submit a shop pre-check of a file, product and anchor text (daily quota per account); follow it with GET …/precheck/{taskId}',
    rpc: PrecheckService.method.submitPrecheck,
    schema: { body: SubmitPrecheckBody, response: { 200: okEnvelope(PrecheckJson) } },
    toRequest: (req) => {
      const b = req.body;
      return { accountId: b.accountId, fileId: b.fileId, productId: b.productId, productTitle: b.productTitle };
    },
    toData: (res) => precheckJson(res.precheck!),
  }),
  defineRoute({
    method: 'GET',
    url: '/publish/tts/precheck/:taskId',
    summary: "One pre-check: status, the violation and quality dimensions (passed or failed) and the shop's issues",
    rpc: PrecheckService.method.getPrecheck,
    schema: { params: PrecheckIdParams, response: { 200: okEnvelope(PrecheckJson) } },
    toRequest: (req) => ({ id: req.params.taskId }),
    toData: (res) => precheckJson(res.precheck!),
  }),
];
