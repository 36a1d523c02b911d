import { commentText } from '@kube-proxy/core';

/**
 * A service port's name as rule comments show it (upstream writes ServicePortName.String() as it
 * is): core's commentText, so a valid `namespace/name:port` is written byte for byte and anything
 * else (a name fed in bypassing validation) only as percent-encoded text that cannot end the comment
 * or the line.
 */

/**
 * Room for the name in the longest comment the renderer writes around it:
 * `"other traffic to <name> will be dropped by KUBE-PROXY-FIREWALL"` leaves 255 - 56 = 199
 * characters (`"<name> -> <[ipv6]:port>"` needs at most 4 + 47). Valid names are at most
 * 63 + 1 + 63 + 1 + 15 = 143 characters and are never cut.
 */
export const MAX_NAME_IN_COMMENT = 199;

/** `servicePortName` (ServicePortName.key) as comment text. */
export function commentName(servicePortName: string): string {
  return commentText(servicePortName, MAX_NAME_IN_COMMENT);
}
