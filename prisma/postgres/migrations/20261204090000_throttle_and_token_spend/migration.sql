-- CreateTable
CREATE TABLE "AutoInvestigation" (
    "id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "incidentId" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AutoInvestigation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ModelTokenSpend" (
    "scope" TEXT NOT NULL,
    "tokens" INTEGER NOT NULL DEFAULT 0,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ModelTokenSpend_pkey" PRIMARY KEY ("scope")
);

-- CreateIndex
CREATE INDEX "AutoInvestigation_key_at_idx" ON "AutoInvestigation"("key", "at");

-- AddForeignKey
ALTER TABLE "AutoInvestigation" ADD CONSTRAINT "AutoInvestigation_incidentId_fkey" FOREIGN KEY ("incidentId") REFERENCES "Incident"("id") ON DELETE CASCADE ON UPDATE CASCADE;
