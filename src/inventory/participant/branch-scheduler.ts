/**
 * What the participant asks of the background machinery: check for abandoned branches when one
 * falls due. Only an accelerator — the sweeper finds them by their stored deadline anyway; the
 * call never rejects (an implementation that cannot schedule logs it, bounded).
 */
export abstract class BranchScheduler {
  abstract timeoutDue(at: Date): Promise<void>;
}
