/**
 * The lines of one iptables-restore table section as the writers build them: each rule is an
 * argument vector joined by core's joinArgs (arguments with spaces quoted, a newline / `\r` / NUL in
 * any argument refused), so a rule is always exactly one line whatever reached it.
 */
import { joinArgs } from '@kube-proxy/netfilter-iptables';

export class RuleLines {
  readonly lines: string[] = [];

  /** Appends one rule line from its arguments (`-A CHAIN …`). */
  rule(...args: ReadonlyArray<string | readonly string[]>): void {
    this.lines.push(joinArgs(args.flat()));
  }
}
