/**
 * What the operator console's page looks like, measured in the browser: where the replicas table
 * sits in its card, and which colour each transport's line is drawn in.
 */
import type { Page } from 'playwright-core';

export interface TableInCard {
  /** The table's full width, and the width its card shows of it. */
  tableWidth: number;
  shownWidth: number;
  /** Height of the scrollbar under the table (0: none drawn). */
  scrollbar: number;
  /** Scrolled to the end: the last column, and the replica's name, inside the card. */
  lastColumnShown: boolean;
  replicaShown: boolean;
}

/** The replicas table in its card, then scrolled to its last column (and back). */
export function replicasTableInCard(page: Page): Promise<TableInCard> {
  return page.locator('#replicas').evaluate((table) => {
    const card = table.closest('section')!;
    const scroller = table.parentElement!;
    const inside = (el: typeof table) => {
      const r = el.getBoundingClientRect();
      const c = card.getBoundingClientRect();
      return r.width > 0 && r.left >= c.left && r.right <= c.right;
    };
    const row = table.querySelector('tbody tr')!;
    scroller.scrollLeft = scroller.scrollWidth;
    const shown = {
      lastColumnShown: inside(row.lastElementChild!),
      replicaShown: inside(row.firstElementChild!),
    };
    scroller.scrollLeft = 0;
    const style = table.ownerDocument.defaultView!.getComputedStyle(scroller);
    const borders = Number.parseFloat(style.borderTopWidth) + Number.parseFloat(style.borderBottomWidth);
    return {
      tableWidth: table.scrollWidth,
      shownWidth: scroller.clientWidth,
      scrollbar: scroller.offsetHeight - scroller.clientHeight - borders,
      ...shown,
    };
  });
}

/** The stroke colour of each line of the connections chart, by replica and transport (from its label). */
export function connectionLineColours(page: Page): Promise<Record<string, Record<string, string>>> {
  return page.locator('#chart-connections svg .mark-line path').evaluateAll((paths) => {
    const colours: Record<string, Record<string, string>> = {};
    for (const path of paths) {
      const label = path.getAttribute('aria-label') ?? '';
      const replica = /replica: ([^;]+)/.exec(label)?.[1];
      const transport = /transport: ([^;]+)/.exec(label)?.[1];
      if (!replica || !transport) continue;
      colours[replica] ??= {};
      colours[replica][transport] = path.getAttribute('stroke') ?? '';
    }
    return colours;
  });
}
