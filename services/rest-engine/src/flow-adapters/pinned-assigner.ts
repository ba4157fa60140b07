/**
 * Partition pinning (`partition: N`): kafkajs has no manual assignment, so the binding's group uses
 * this assigner, which hands the one pinned partition to one member (the first by member id) and
 * nothing else to anyone. Offsets still commit under the group; a pinned binding's group must be its
 * own (a group whose members ask for another assigner refuses to form).
 */
import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

export function pinnedAssigner(topic: string, partition: number): PartitionAssigner {
  const name = `GatehousePinned-${topic}-${partition}`;
  return () => ({
    name,
    version: 1,
    async assign({ members }) {
      const ids = members.map((m) => m.memberId).sort();
      return ids.map((memberId, i) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 1,
          assignment: i === 0 ? { [topic]: [partition] } : {},
          userData: Buffer.alloc(0),
        }),
      }));
    },
    protocol({ topics }) {
      return {
        name,
        metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.alloc(0) }),
      };
    },
  });
}
