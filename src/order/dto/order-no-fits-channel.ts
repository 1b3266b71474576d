import { ValidateBy, ValidationArguments } from 'class-validator';
import { orderNoProblem } from '../../channels/registered-channels';

const channelOf = (args: ValidationArguments) => (args.object as { channel?: string }).channel;

/** The order number also keeps the rule of the order's channel (of every channel when it names none). */
export function OrderNoFitsChannel(): PropertyDecorator {
  return ValidateBy({
    name: 'orderNoFitsChannel',
    validator: {
      validate: (value: unknown, args) => typeof value !== 'string' || !orderNoProblem(value, channelOf(args!)),
      defaultMessage: (args) => orderNoProblem(String(args!.value), channelOf(args!)) ?? 'orderNo does not fit',
    },
  });
}
