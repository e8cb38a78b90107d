-- AlterTable
ALTER TABLE "ApprovalRequest" ADD COLUMN     "diagnosis" TEXT;

